// `kevo delete RUN`: removes a run from the store (its iterations, candidates and gate), refused
// while a process is running it. The kernel files it wrote stay where they are.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "search/loop.hpp"
#include "store/run_lock.hpp"
#include "store/store.hpp"

namespace kevo::cli {

namespace {

struct DeleteOptions {
    std::string run_id, db = "kevo.db";
    bool json = false;
};

int run(const DeleteOptions& o) {
    // A store that is not there is an error, not a new empty one.
    if (auto existing = Store::open(o.db, Store::Access::read_only); !existing) return fail(existing.error().message);
    auto writable = Store::open(o.db);
    if (!writable) return fail(writable.error().message);
    auto lock = RunLock::acquire(o.db, o.run_id);
    if (!lock) return fail(lock.error().message);
    auto record = (*writable)->load_run(o.run_id);
    if (!record) return fail(record.error().message);
    auto options = run_options_from_json(record->settings);
    if (auto r = (*writable)->delete_run(o.run_id); !r) return fail(r.error().message);
    RunLock::remove_stale(o.db, o.run_id);
    const std::string files =
        options ? fmt::format("{}/{}", options->output_dir.empty() ? "kevo-runs" : options->output_dir, o.run_id) : "";
    if (o.json) print_json({{"deleted", o.run_id}, {"db", o.db}, {"files_kept", files}});
    else say(false, fmt::format("deleted run {} from {}{}", o.run_id, o.db,
                                files.empty() ? "" : fmt::format("; its kernel files in {} are kept", files)));
    return kExitOk;
}

}  // namespace

void setup_delete(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("delete", "remove a run from the store (refused while it is running)");
    auto o = std::make_shared<DeleteOptions>();
    cmd->add_option("RUN", o->run_id, "run id (see `kevo report --all`)")->required();
    cmd->add_option("--db", o->db, "SQLite store")->capture_default_str();
    add_json_option(*cmd, o->json);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
