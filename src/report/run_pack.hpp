// Where a run's task stands in its pack (`kevo report RUN`): the pack, the task's weight in each
// of the pack's vectors and the run's contribution w_i S_i to each S_agg. One run has no S_agg of
// its own: the pack's sums w_i S_i over all its tasks (kevo bench, the study report).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pack/weights.hpp"

namespace kevo {

// {"name", "weights": [{"vector", "weight", "contribution"}], "note"}; `best_score` is the run's S_i.
nlohmann::json run_pack_json(const std::string& task, const std::optional<double>& best_score, const PackWeightsSet& weights);
std::string render_run_pack_text(const nlohmann::json& pack);

}  // namespace kevo
