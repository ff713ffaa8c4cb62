// A pack's aggregate of its tasks' scores S_i: the unweighted geometric mean (kevo's default) and,
// beside it, S_agg = sum w_i S_i under each weight vector of the pack. Tasks without a score are
// named, never silently dropped: the mean is over the scored tasks, and each S_agg is renormalised
// over the weight of the scored tasks.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "pack/weights.hpp"

namespace kevo {

struct WeightedAggregate {
    std::string vector;
    std::optional<double> value;        // null when no scored task has weight in the vector
    double weight_scored = 0;           // the scored tasks' share of the vector's weight (1: nothing missing)
    std::vector<std::string> missing;   // tasks of weight > 0 with no score (their weight is left out)
};
KEVO_JSON_FIELDS(WeightedAggregate, vector, value, weight_scored, missing)

struct PackAggregate {
    std::string pack;
    std::vector<std::string> scored, missing;  // the pack's tasks with and without a score
    std::optional<double> geomean;             // over the scored tasks (0 when one of them scored 0)
    std::vector<WeightedAggregate> weighted;   // one per vector of the pack's weights; empty without weights
    std::string weights_note;                  // why there is no S_agg although the pack ships weights
};
KEVO_JSON_FIELDS(PackAggregate, pack, scored, missing, geomean, weighted, weights_note)

// `scores`: task -> S_i for the tasks scored (0 for one that was run and failed). One aggregate per
// pack with a scored task, in pack order.
std::vector<PackAggregate> aggregate_packs(const std::map<std::string, double>& scores, const PackWeightsSet& weights);

// One line per pack, starting with `label` ("best", "tuner / islands"):
// "best, pack sci (12 of 12 tasks): S 0.4123 (geometric mean); S_agg W_a 0.3900, W_b 0.4012".
std::string render_aggregates_text(const std::vector<PackAggregate>& aggregates, const std::string& label);
// The part after the label, for tables.
std::string aggregate_text(const PackAggregate& aggregate);
// An aggregate's value as the reports print it: "0.4123", or "-" when there is none.
std::string aggregate_value_text(const std::optional<double>& value);

}  // namespace kevo
