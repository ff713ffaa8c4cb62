// `kevo report RUN|--all`: a stored run (settings, iterations, held-out gate) or the list of runs.
#include <optional>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/run_report.hpp"
#include "store/store.hpp"

namespace kevo::cli {

namespace {

struct ReportOptions {
    std::string run_id, db = "kevo.db";
    std::optional<int> iteration;
    bool all = false, json = false;
};

int run(const ReportOptions& o) {
    if (o.run_id.empty() == !o.all) return fail("kevo report needs a RUN id or --all (not both)");
    if (o.iteration && o.all) return fail("--iteration N shows one iteration of one RUN, not --all");
    // Reading only: a read-only store, or an empty file, stays exactly as it is.
    auto store = Store::open(o.db, Store::Access::read_only);
    if (!store) return fail(store.error().message);
    auto doc = o.all         ? all_runs_json(**store)
               : o.iteration ? iteration_report_json(**store, o.run_id, *o.iteration)
                             : run_report_json(**store, o.run_id);
    if (!doc) return fail(doc.error().message);
    if (o.json) print_json(*doc);
    else say(false, o.all ? render_runs_text(*doc) : o.iteration ? render_iteration_text(*doc) : render_run_text(*doc));
    return kExitOk;
}

}  // namespace

void setup_report(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("report", "render a stored run, or all runs");
    auto o = std::make_shared<ReportOptions>();
    cmd->add_option("RUN", o->run_id, "run id (see `kevo report --all`)");
    cmd->add_flag("--all", o->all, "every run in the store");
    cmd->add_option("--iteration", o->iteration, "one iteration in full: the stored prompt, answer and candidate")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--db", o->db, "SQLite store (default kevo.db)");
    add_json_option(*cmd, o->json);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
