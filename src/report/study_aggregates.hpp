// The study report's aggregates, per model and strategy and per pack (pack/aggregate.hpp), built
// from the gate: S_i of a task is the median over the group's gated runs of what the gate measured
// side by side with the seed for the search's best (its speed-up in distribution and held out, and
// Phi at the held-out size of it and of the seed), so that they agree with the Results table. The
// search's own scores (its best in-distribution score and the seed's, each from one evaluation in
// its own window) are aggregated apart and labelled as such. A cell whose run did not get through
// the gate (interrupted, failed, still running, not started) is left out of both, named and counted;
// a gated run whose best the gate could not time (it failed a check there) has no speed-up, counted.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pack/aggregate.hpp"
#include "report/report_data.hpp"

namespace kevo {

struct LeftOutCell {
    std::string cell;    // the study cell, or the run id outside a study
    std::string run_id;  // empty when no run was started
    std::string why;     // "interrupted", "failed", "running", "not gated", "not started", "run missing from the store"
};

struct StudyAggregateRow {
    std::string model, strategy;
    int gated = 0;    // runs aggregated: through the gate
    int untimed = 0;  // of them, whose best the gate did not time (failed a check): no speed-up
    std::vector<LeftOutCell> left_out;
    // From the gate (geometric means over the pack; no S_agg for speed-ups).
    std::vector<PackAggregate> speedup, heldout_speedup;                 // seed time / the best's time
    std::vector<PackAggregate> heldout_fraction, seed_heldout_fraction;  // Phi at the held-out size, with S_agg
    // The search's own scores, each from one evaluation (not side by side).
    std::vector<PackAggregate> search_best, search_seed;
};

std::vector<StudyAggregateRow> study_aggregates(const ReportData& data);

// What the figures mean, one sentence each for the reports.
extern const char* const kGateAggregateMeaning;
extern const char* const kSearchAggregateMeaning;
std::string render_study_aggregates_text(const std::vector<StudyAggregateRow>& rows);
// [{"model", "strategy", "gated", "untimed", "left_out": [{"cell", "run_id", "why"}],
//   "gate": {"speedup", "heldout_speedup", "heldout_fraction", "seed_heldout_fraction": [PackAggregate]},
//   "search": {"best", "seed": [PackAggregate]}}]
nlohmann::json study_aggregates_json(const std::vector<StudyAggregateRow>& rows);
// "left out of the aggregates: 2 cells (a/b/c/1 interrupted; ...)", or "" when none.
std::string left_out_text(const std::vector<LeftOutCell>& cells);

}  // namespace kevo
