// See bench_aggregates.hpp.
#include "bench/bench_aggregates.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/roofline.hpp"

namespace kevo {
namespace {

constexpr const char* kMeaning =
    "S_i is each task's score at the timed profile (the geometric mean of its fractions, on trace weighted by the "
    "shapes' call counts; 0 when the kernel failed). "
    "S is the unweighted geometric mean of S_i over the pack, kevo's default; S_agg = sum w_i S_i under each of the "
    "pack's weight vectors (docs/packs.md), renormalised over the tasks scored. Measured basis: the fractions of the "
    "ceilings in force (fp8 and int8 bounded: docs/evaluation.md); datasheet basis: of the vendor's figures, as "
    "Atrex-Bench scores.";

}  // namespace

std::map<std::string, double> bench_scores(const BenchReport& report, BenchKernel kernel, ScoreBasis basis) {
    std::map<std::string, double> scores;
    for (const auto& t : report.tasks) {
        const auto& result = kernel == BenchKernel::seed ? t.seed : t.best;
        if (!result) continue;
        if (result->verdict != Verdict::ok) {
            scores[t.task] = 0.0;
            continue;
        }
        const auto score = basis == ScoreBasis::measured ? result->score : datasheet_score(*result);
        if (score) scores[t.task] = *score;
        else if (basis == ScoreBasis::measured) scores[t.task] = 0.0;
    }
    return scores;
}

std::vector<std::string> implausible_tasks(const BenchReport& report, BenchKernel kernel) {
    std::vector<std::string> out;
    for (const auto& t : report.tasks) {
        const auto& result = kernel == BenchKernel::seed ? t.seed : t.best;
        if (result && std::any_of(result->sizes.begin(), result->sizes.end(),
                                  [](const SizeResult& s) { return !s.heldout && s.implausible; }))
            out.push_back(t.task);
    }
    return out;
}

BenchAggregates bench_aggregates(const BenchReport& report, const PackWeightsSet& weights) {
    BenchAggregates a;
    a.seed = aggregate_packs(bench_scores(report, BenchKernel::seed), weights);
    a.best = aggregate_packs(bench_scores(report, BenchKernel::best), weights);
    a.seed_datasheet = aggregate_packs(bench_scores(report, BenchKernel::seed, ScoreBasis::datasheet), weights);
    a.best_datasheet = aggregate_packs(bench_scores(report, BenchKernel::best, ScoreBasis::datasheet), weights);
    a.seed_implausible = implausible_tasks(report, BenchKernel::seed);
    a.best_implausible = implausible_tasks(report, BenchKernel::best);
    return a;
}

namespace {

// Said beside an aggregate whose S_i include an implausible fraction.
std::string implausible_note(const std::vector<std::string>& tasks) {
    if (tasks.empty()) return {};
    return fmt::format(" (INCLUDES IMPLAUSIBLE fractions, above 1.05 of a ceiling: {} !)", fmt::join(tasks, ", "));
}

struct Labelled {
    const char* label;
    const std::vector<PackAggregate>* list;
    const std::vector<std::string>* implausible;
};

std::vector<Labelled> labelled(const BenchAggregates& a) {
    return {{"seed, measured basis", &a.seed, &a.seed_implausible},
            {"best, measured basis", &a.best, &a.best_implausible},
            {"seed, datasheet basis", &a.seed_datasheet, &a.seed_implausible},
            {"best, datasheet basis", &a.best_datasheet, &a.best_implausible}};
}

}  // namespace

std::string render_bench_aggregates_text(const BenchAggregates& a) {
    if (a.seed.empty() && a.best.empty()) return {};
    std::string out = fmt::format("aggregates ({})\n", kMeaning);
    for (const auto& l : labelled(a))
        for (const auto& p : *l.list) out += fmt::format("  {}, {}{}\n", l.label, aggregate_text(p), implausible_note(*l.implausible));
    return out;
}

std::string render_bench_aggregates_markdown(const BenchAggregates& a) {
    if (a.seed.empty() && a.best.empty()) return {};
    std::string out = fmt::format("\n## Aggregates\n\n{}\n\n| kernels | aggregate |\n| --- | --- |\n", kMeaning);
    for (const auto& l : labelled(a))
        for (const auto& p : *l.list) out += fmt::format("| {} | {}{} |\n", l.label, aggregate_text(p), implausible_note(*l.implausible));
    return out;
}

nlohmann::json to_json(const BenchAggregates& a) {
    return {{"seed", a.seed},
            {"best", a.best},
            {"basis", "measured"},
            {"datasheet", {{"basis", "datasheet"}, {"seed", a.seed_datasheet}, {"best", a.best_datasheet}}},
            {"implausible", {{"seed", a.seed_implausible}, {"best", a.best_implausible}}}};
}

}  // namespace kevo
