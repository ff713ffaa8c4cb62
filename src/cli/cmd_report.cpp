// `kevo report RUN|--all`: a stored run (settings, iterations, held-out gate) or the list of runs;
// `kevo report RUN|--study ID|--all --html FILE`: the study report, one self-contained page.
#include <optional>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report_scope.hpp"
#include "core/files.hpp"
#include "report/html/html_report.hpp"
#include "report/run_report.hpp"
#include "store/store.hpp"

namespace kevo::cli {

namespace {

struct ReportOptions {
    ScopeOptions scope;
    std::string db = "kevo.db", html;
    std::optional<int> iteration;
    bool json = false;
};

int html_report(const ReportOptions& o, Store& store) {
    auto scope = scope_from(o.scope, "kevo report --html");
    if (!scope) return fail(scope.error().message);
    auto data = collect_report_data(store, *scope);
    if (!data) return fail(data.error().message);
    if (auto ok = write_file_atomic(o.html, render_html_report(*data)); !ok)
        return fail(fmt::format("--html {}: {}", o.html, ok.error().message));
    say(o.json, o.html + "\n");
    return kExitOk;
}

int run(const ReportOptions& o) {
    if (o.iteration && (o.scope.all || !o.scope.study_id.empty() || !o.html.empty()))
        return fail("--iteration N shows one iteration of one RUN (not with --all, --study or --html)");
    if (o.html.empty() && !o.scope.study_id.empty())
        return fail("--study ID is reported as a page: add --html FILE (or list runs with --all)");
    if (o.html.empty() && o.scope.run_id.empty() == !o.scope.all)
        return fail("kevo report needs a RUN id or --all (not both)");
    // Reading only: a read-only store, or an empty file, stays exactly as it is.
    auto store = Store::open(o.db, Store::Access::read_only);
    if (!store) return fail(store.error().message);
    if (!o.html.empty()) return html_report(o, **store);
    const bool all = o.scope.all;
    auto doc = all           ? all_runs_json(**store)
               : o.iteration ? iteration_report_json(**store, o.scope.run_id, *o.iteration)
                             : run_report_json(**store, o.scope.run_id);
    if (!doc) return fail(doc.error().message);
    if (o.json) print_json(*doc);
    else say(false, all ? render_runs_text(*doc) : o.iteration ? render_iteration_text(*doc) : render_run_text(*doc));
    return kExitOk;
}

}  // namespace

void setup_report(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("report", "render a stored run, or all runs; --html: a study report page");
    auto o = std::make_shared<ReportOptions>();
    add_scope_options(*cmd, o->scope);
    cmd->add_option("--iteration", o->iteration, "one iteration in full: the stored prompt, answer and candidate")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--html", o->html, "write the report as one self-contained HTML page (figures as inline SVG)");
    cmd->add_option("--db", o->db, "SQLite store (default kevo.db)");
    add_json_option(*cmd, o->json);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
