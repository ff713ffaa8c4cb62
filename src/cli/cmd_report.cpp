// `kevo report RUN|--all`: a stored run (settings, iterations, held-out gate) or the list of runs.
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/run_report.hpp"
#include "store/store.hpp"

namespace kevo::cli {

namespace {

struct ReportOptions {
    std::string run_id, db = "kevo.db";
    bool all = false, json = false;
};

int run(const ReportOptions& o) {
    if (o.run_id.empty() == !o.all) return fail("kevo report needs a RUN id or --all (not both)");
    if (!std::filesystem::exists(o.db)) return fail(fmt::format("{}: no such store (give --db PATH)", o.db));
    auto store = Store::open(o.db);
    if (!store) return fail(store.error().message);
    auto doc = o.all ? all_runs_json(**store) : run_report_json(**store, o.run_id);
    if (!doc) return fail(doc.error().message);
    if (o.json) print_json(*doc);
    else say(false, o.all ? render_runs_text(*doc) : render_run_text(*doc));
    return kExitOk;
}

}  // namespace

void setup_report(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("report", "render a stored run, or all runs");
    auto o = std::make_shared<ReportOptions>();
    cmd->add_option("RUN", o->run_id, "run id (see `kevo report --all`)");
    cmd->add_flag("--all", o->all, "every run in the store");
    cmd->add_option("--db", o->db, "SQLite store (default kevo.db)");
    add_json_option(*cmd, o->json);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
