// The study report's aggregates: per model and strategy, each pack's geometric mean of the tasks'
// S_i and S_agg under each of the pack's weight vectors (pack/aggregate.hpp). S_i of a task is the
// median over the group's runs (its seeds) of the run's best in-distribution score, or of its seed's
// score for the seed row; a task with no scored run in the group is missing (named, renormalised).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pack/aggregate.hpp"
#include "report/report_data.hpp"

namespace kevo {

struct StudyAggregateRow {
    std::string model, strategy;
    std::vector<PackAggregate> seed, best;
};

std::vector<StudyAggregateRow> study_aggregates(const ReportData& data);

// What S_i, S and S_agg mean here, in one sentence for the reports.
extern const char* const kStudyAggregateMeaning;
std::string render_study_aggregates_text(const std::vector<StudyAggregateRow>& rows);
// [{"model", "strategy", "best": [PackAggregate], "seed": [...]}]
nlohmann::json study_aggregates_json(const std::vector<StudyAggregateRow>& rows);

}  // namespace kevo
