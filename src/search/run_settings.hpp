// A run's option values (by the names of search/options.hpp) and where they are stored: the run's
// own options in RunOptions' fields, the strategy's in RunOptions::strategy_options, the proposers'
// in RunOptions::settings. Also the resume rule: what `kevo run --resume` may change, and the
// record of a changed connection. All of it follows the option table; nothing here names an option
// but the run's identity.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"
#include "search/loop.hpp"
#include "search/options.hpp"

namespace kevo {

// Every option's default, by name (null: unset).
nlohmann::json default_option_values();

// `values` (by name; missing ones take their defaults) placed where a run stores them, over `base`:
// the strategy's options for the strategy named there, every proposer's options.
Expected<RunOptions> apply_option_values(RunOptions base, const nlohmann::json& values);

// The value of every option as `stored` holds it (its default where a stored run lacks it).
nlohmann::json stored_option_values(const RunOptions& stored);

// The options a resume's command line names (`given`, by name, with `values`) that it may not
// change, checked against the stored run: an error saying what is refused (stored and given
// values) and what may change. A given --backend is compared as resolved ("auto": the one it picks).
Expected<void> check_resume_options(const std::string& run_id, const std::set<std::string>& given,
                                    const nlohmann::json& values, const RunOptions& stored);
// The refusal of a flag that is no run option (--ceilings, --study) on a resume.
std::string resume_refusal(const std::string& run_id, const std::string& flag);

// What a resume's command line extends: the given options of ResumeRule::extends (the budgets).
RunExtension extended_budgets(const std::set<std::string>& given, const nlohmann::json& values);

// The proposer settings a resume continues with: the stored ones, except for the proposer's
// options that the command line gives and that say how it is reached (ResumeRule::reconnects),
// then its rules between options (ProposerEntry::settle). A change is recorded as a new segment,
// {"from_iteration", "at", "changed": {key: {"from", "to"}}}, which kevo report shows.
Expected<nlohmann::json> reconnected_settings(const RunOptions& stored, const std::set<std::string>& given,
                                              const nlohmann::json& values, int from_iteration);

// The `kevo run` words (after "kevo run TASK") that start a run with the stored settings again:
// every option of the run, its strategy and its proposer, defaults included, so that a changed
// default cannot change the rerun.
std::vector<std::string> rerun_words(const RunOptions& stored);

}  // namespace kevo
