// The bench's aggregates per pack (pack/aggregate.hpp) over the tasks' scores at the timed
// profile, once for the seeds and once for the best-known kernels: the geometric mean and S_agg
// under each of the pack's weight vectors.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "pack/aggregate.hpp"

namespace kevo {

enum class BenchKernel { seed, best };
enum class ScoreBasis { measured, datasheet };

// S_i of every benched task for that kernel: its score, or 0 when it was evaluated and failed. A
// task whose kernel was not evaluated (no best-known kernel) is left out, so it shows as missing;
// on the datasheet basis so is one whose device has no datasheet entry.
std::map<std::string, double> bench_scores(const BenchReport& report, BenchKernel kernel,
                                           ScoreBasis basis = ScoreBasis::measured);
// The tasks whose S_i includes an implausible fraction (an in-distribution size above 1.05 of its ceiling).
std::vector<std::string> implausible_tasks(const BenchReport& report, BenchKernel kernel);

struct BenchAggregates {
    std::vector<PackAggregate> seed, best;                      // measured basis
    std::vector<PackAggregate> seed_datasheet, best_datasheet;  // datasheet basis
    std::vector<std::string> seed_implausible, best_implausible;
};
BenchAggregates bench_aggregates(const BenchReport& report, const PackWeightsSet& weights);

std::string render_bench_aggregates_text(const BenchAggregates& aggregates);
std::string render_bench_aggregates_markdown(const BenchAggregates& aggregates);
nlohmann::json to_json(const BenchAggregates& aggregates);

}  // namespace kevo
