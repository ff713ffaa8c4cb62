// See bench_aggregates.hpp.
#include "bench/bench_aggregates.hpp"

#include <fmt/format.h>

namespace kevo {
namespace {

constexpr const char* kMeaning =
    "S_i is each task's score at the timed profile (the geometric mean of its fractions; 0 when the kernel failed). "
    "S is the unweighted geometric mean of S_i over the pack, kevo's default; S_agg = sum w_i S_i under each of the "
    "pack's weight vectors (docs/packs.md), renormalised over the tasks scored.";

}  // namespace

std::map<std::string, double> bench_scores(const BenchReport& report, BenchKernel kernel) {
    std::map<std::string, double> scores;
    for (const auto& t : report.tasks) {
        const auto& result = kernel == BenchKernel::seed ? t.seed : t.best;
        if (result) scores[t.task] = result->verdict == Verdict::ok && result->score ? *result->score : 0.0;
    }
    return scores;
}

BenchAggregates bench_aggregates(const BenchReport& report, const PackWeightsSet& weights) {
    return {aggregate_packs(bench_scores(report, BenchKernel::seed), weights),
            aggregate_packs(bench_scores(report, BenchKernel::best), weights)};
}

std::string render_bench_aggregates_text(const BenchAggregates& a) {
    if (a.seed.empty() && a.best.empty()) return {};
    return fmt::format("aggregates ({})\n", kMeaning) + render_aggregates_text(a.seed, "  seed") +
           render_aggregates_text(a.best, "  best");
}

std::string render_bench_aggregates_markdown(const BenchAggregates& a) {
    if (a.seed.empty() && a.best.empty()) return {};
    std::string out = fmt::format("\n## Aggregates\n\n{}\n\n| kernels | aggregate |\n| --- | --- |\n", kMeaning);
    for (const auto* list : {&a.seed, &a.best})
        for (const auto& p : *list) out += fmt::format("| {} | {} |\n", list == &a.seed ? "seed" : "best", aggregate_text(p));
    return out;
}

nlohmann::json to_json(const BenchAggregates& a) { return {{"seed", a.seed}, {"best", a.best}}; }

}  // namespace kevo
