// Renders stored runs: one run (settings, every iteration, the held-out gate) or the list of all
// runs, as JSON or terminal text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"
#include "store/store.hpp"

namespace kevo {

Expected<nlohmann::json> run_report_json(Store& store, const std::string& run_id);
Expected<nlohmann::json> all_runs_json(Store& store);
std::string render_run_text(const nlohmann::json& report);
// One iteration in full: the stored prompt and answer, the candidate's source, its result.
Expected<nlohmann::json> iteration_report_json(Store& store, const std::string& run_id, int iteration);
std::string render_iteration_text(const nlohmann::json& report);
std::string render_runs_text(const nlohmann::json& runs);

}  // namespace kevo
