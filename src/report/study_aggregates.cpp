// See study_aggregates.hpp.
#include "report/study_aggregates.hpp"

#include <map>

#include <fmt/format.h>

#include "report/html/report_stats.hpp"

namespace kevo {

const char* const kStudyAggregateMeaning =
    "S_i is a task's median over the runs (seeds) of the search's best in-distribution score (seed: of the seed's "
    "score); S is the unweighted geometric mean of S_i over the pack, kevo's default; S_agg = sum w_i S_i under each "
    "of the pack's weight vectors (docs/packs.md), renormalised over the tasks scored.";

std::vector<StudyAggregateRow> study_aggregates(const ReportData& data) {
    // (model, strategy) -> task -> the runs' scores
    struct Scores {
        std::map<std::string, std::vector<double>> seed, best;
    };
    std::map<std::pair<std::string, std::string>, Scores> groups;
    for (const auto& d : data.runs) {
        auto& g = groups[{d.model, d.run.strategy}];
        if (d.run.seed_score) g.seed[d.run.task].push_back(*d.run.seed_score);
        if (d.run.best_score) g.best[d.run.task].push_back(*d.run.best_score);
    }
    const auto medians = [](const std::map<std::string, std::vector<double>>& by_task) {
        std::map<std::string, double> out;
        for (const auto& [task, values] : by_task) out[task] = *median(values);
        return out;
    };
    std::vector<StudyAggregateRow> rows;
    for (const auto& [key, g] : groups)
        rows.push_back({key.first, key.second, aggregate_packs(medians(g.seed), data.weights),
                        aggregate_packs(medians(g.best), data.weights)});
    return rows;
}

std::string render_study_aggregates_text(const std::vector<StudyAggregateRow>& rows) {
    if (rows.empty()) return {};
    std::string out = fmt::format("aggregates ({})\n", kStudyAggregateMeaning);
    for (const auto& r : rows) {
        out += render_aggregates_text(r.best, fmt::format("  {} / {}, best", r.model, r.strategy));
        out += render_aggregates_text(r.seed, fmt::format("  {} / {}, seed", r.model, r.strategy));
    }
    return out;
}

nlohmann::json study_aggregates_json(const std::vector<StudyAggregateRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back({{"model", r.model}, {"strategy", r.strategy}, {"best", r.best}, {"seed", r.seed}});
    return out;
}

}  // namespace kevo
