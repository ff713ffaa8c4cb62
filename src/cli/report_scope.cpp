// See report_scope.hpp.
#include "cli/report_scope.hpp"

#include <fmt/format.h>

namespace kevo::cli {

void add_scope_options(CLI::App& cmd, ScopeOptions& o) {
    cmd.add_option("RUN", o.run_id, "run id (see `kevo report --all`)");
    cmd.add_option("--study", o.study_id, "a study's runs: its id, or `latest` for the newest study");
    cmd.add_flag("--all", o.all, "every run in the store");
}

Expected<ReportScope> scope_from(const ScopeOptions& o, const std::string& command) {
    const int given = !o.run_id.empty() + !o.study_id.empty() + o.all;
    if (given != 1)
        return make_error(fmt::format("{} needs one of: a RUN id, --study ID (or --study latest), --all{}", command,
                                      given > 1 ? " (not several)" : ""));
    if (o.all) return ReportScope{ReportScope::Kind::all, ""};
    if (!o.study_id.empty()) return ReportScope{ReportScope::Kind::study, o.study_id};
    return ReportScope{ReportScope::Kind::run, o.run_id};
}

}  // namespace kevo::cli
