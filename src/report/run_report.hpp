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
std::string render_runs_text(const nlohmann::json& runs);

}  // namespace kevo
