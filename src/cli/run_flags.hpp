// `kevo run`'s flags, declared from the one option table (search/options.hpp): each option with
// its flag, help, default and the check of its type and range, so that the command line accepts
// exactly what a study file does. What was given is read back as values by option name.
#pragma once

#include <map>
#include <set>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace kevo::cli {

// The storage the flags are parsed into (kept alive with the command).
struct RunFlags {
    std::map<std::string, std::string> text;       // by option name: the value as given
    std::map<std::string, bool> on;                // flag options
    std::map<std::string, CLI::Option*> declared;  // by option name
};

// Declares every option of the table that has a flag on `cmd`.
void add_run_flags(CLI::App& cmd, RunFlags& flags);
// The names of the options given on the command line.
std::set<std::string> given_options(const RunFlags& flags);
// Every option's value by name: as given (typed), else its default.
nlohmann::json option_values(const RunFlags& flags);

}  // namespace kevo::cli
