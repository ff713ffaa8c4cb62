// `kevo export --csv DIR RUN|--study ID|--all`: the runs as flat CSV tables (runs, iterations,
// per-size measurements, gate rows) for pandas and spreadsheets.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report_scope.hpp"
#include "report/csv/csv_export.hpp"
#include "store/store.hpp"

namespace kevo::cli {

namespace {

struct ExportOptions {
    ScopeOptions scope;
    std::string csv_dir, db = "kevo.db";
};

int run(const ExportOptions& o) {
    auto scope = scope_from(o.scope, "kevo export");
    if (!scope) return fail(scope.error().message);
    auto store = Store::open(o.db, Store::Access::read_only);
    if (!store) return fail(store.error().message);
    auto data = collect_report_data(**store, *scope);
    if (!data) return fail(data.error().message);
    auto paths = export_csv(*data, o.csv_dir);
    if (!paths) return fail(paths.error().message);
    for (const auto& p : *paths) say(false, p + "\n");
    return kExitOk;
}

}  // namespace

void setup_export(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("export", "write stored runs as CSV tables (runs, iterations, sizes, gate)");
    auto o = std::make_shared<ExportOptions>();
    add_scope_options(*cmd, o->scope);
    cmd->add_option("--csv", o->csv_dir, "folder for runs.csv, iterations.csv, sizes.csv and gate.csv")->required();
    cmd->add_option("--db", o->db, "SQLite store (default kevo.db)");
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
