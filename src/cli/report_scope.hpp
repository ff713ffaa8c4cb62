// What `kevo report --html` and `kevo export --csv` cover: one RUN, a study (--study ID|latest) or
// every run (--all); exactly one of them.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/expected.hpp"
#include "report/report_data.hpp"

namespace kevo::cli {

struct ScopeOptions {
    std::string run_id, study_id;
    bool all = false;
};

// Adds RUN, --study and --all to the command.
void add_scope_options(CLI::App& cmd, ScopeOptions& options);
// The scope the options name; an error says what is accepted when none or several are given.
Expected<ReportScope> scope_from(const ScopeOptions& options, const std::string& command);

}  // namespace kevo::cli
