// The one table of `kevo run`'s options: each with its flag, type, default, range, help and the part
// of a run that reads it (the loop, the evaluation, the gate, a strategy, a proposer). Everything
// else is derived from it: kevo run's flags (cli/run_flags), the study file's keys and their checks
// (study/study_file), a study cell's command line (study/study), what --resume may change and the
// settings stored with a run (search/run_settings), and kevo report's reproduce line. The run's
// own options are listed in options.cpp; a strategy or a proposer declares its own in its registry
// entry (strategies/registry.hpp, proposers/registry.hpp), so its file is all it takes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kevo {

enum class OptionType {
    text,             // a non-empty string
    path,             // a file or folder; a study's is relative to the study file, "{task}" substituted
    word,             // a string from `words`
    integer,          // a whole number in [lo, hi]
    number,           // a finite number in [lo, hi]
    integer_or_none,  // an integer, or "none" (stored null: left out of the request)
    number_or_none,
    flag,             // true or false; on a command line the flag is given when true
};

// The part of a run that reads an option.
enum class OptionPart { run, budget, loop, evaluation, gate, strategy, proposer };

// What `kevo run --resume` may do with an option: nothing (fixed: it would change what the stored
// iterations mean), extend the search (a budget), or change how the proposer is reached.
enum class ResumeRule { fixed, extends, reconnects };

// Where a study file sets an option: not at all (the matrix or [budget] decides it), in [run], or
// in a [[models]] table (a proposer's option).
enum class StudyPlace { none, run_table, model_table };

struct RunOption {
    std::string name = {};           // the study file's key and the key in the stored settings
    std::string flag = {};           // kevo run's flag ("--gate-top"); empty: a study key only
    OptionType type = OptionType::text;
    nlohmann::json fallback = {};    // the default; null: unset
    double lo = 0, hi = 0;        // integer and number types
    std::vector<std::string> words = {};  // a word's choices; a path's words are kept as words, not paths
    std::string help = {};
    OptionPart part = OptionPart::run;
    std::string owner = {};          // the strategy or proposer it belongs to
    ResumeRule resume = ResumeRule::fixed;
    StudyPlace study = StudyPlace::none;
    std::string stored_as = {};      // the run's own options: the RunOptions field that holds it
    std::string required = {};       // a proposer's option it cannot run without: an example value
    bool prompt = false;             // read only where a prompt is built (proposers with reads_prompt)
};
// True when `value` of a path option is one of its words ("none", "shipped"), not a path.
bool is_path_word(const RunOption& option, const std::string& value);

// Every option: the run's own, then each strategy's and each proposer's in their listed order.
// Built on first use, after the registrations of static initialisation.
const std::vector<RunOption>& run_option_table();
const RunOption* find_run_option(std::string_view name);
const RunOption* find_run_option_by_flag(std::string_view flag);
// The options of one strategy or proposer.
std::vector<const RunOption*> options_of(OptionPart part, std::string_view owner);

// What the option accepts, for messages: "an integer from 1 to 99", "one of \"static\", \"workload\"".
std::string accepted_text(const RunOption& option);
// The value as the option's type reads it, or nullopt when it is not one it accepts ("none" is
// read as null for the *_or_none types). Strings of numbers are read as numbers (a command line).
std::optional<nlohmann::json> read_option_value(const RunOption& option, const nlohmann::json& value);
// The value on a command line: {flag, text}, {flag} for a true flag, nothing for a false flag or an
// unset value (null, except "none" for the *_or_none types).
std::vector<std::string> option_words(const RunOption& option, const nlohmann::json& value);
// A value as text in messages: strings bare, null "none", numbers as JSON writes them.
std::string value_text(const nlohmann::json& value);

}  // namespace kevo
