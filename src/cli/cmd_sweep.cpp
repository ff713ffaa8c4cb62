// `kevo sweep STUDY.toml`: runs a study's matrix of runs into one store (docs/study.md), or with
// --dry-run prints the matrix and each cell's `kevo run` command line without running anything.
// Exit status: 0 when every cell is finished, 1 when a cell failed (its log says why), 2 for a
// bad study file or environment, 128 + N when stopped by signal N (resumable: run it again).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/live_status.hpp"
#include "cli/sweep_table.hpp"
#include "backend/registry.hpp"
#include "core/files.hpp"
#include "core/interrupt.hpp"
#include "core/process.hpp"
#include "core/shell_word.hpp"
#include "pack/pack.hpp"
#include "report/study_aggregates.hpp"
#include "store/store.hpp"
#include "study/device_pool.hpp"
#include "study/study_file.hpp"
#include "study/ranks.hpp"
#include "study/slurm_script.hpp"
#include "study/sweep.hpp"

namespace kevo::cli {
namespace {

struct SweepCliOptions {
    std::string file, db = "kevo.db", out = "kevo-runs", pack, devices;
    int concurrency = 0;
    bool fresh = false, dry_run = false, json = false, slurm = false;
    int nodes = 1, ranks_per_node = 0;  // --slurm: the job's shape (0: one rank per device of this machine)
};

nlohmann::json cell_json(const CellProgress& c) {
    return {{"cell", c.cell.key},       {"task", c.cell.task},         {"model", c.cell.model},
            {"strategy", c.cell.strategy}, {"seed", c.cell.seed},      {"status", cell_status_name(c.status)},
            {"run_id", c.run_id},       {"iterations", c.iterations_done}, {"seed_score", c.seed_score},
            {"best_score", c.best_score}, {"cost_usd", c.cost_usd},    {"tokens", c.tokens},
            {"device", c.device},       {"note", c.note}};
}

// --pack P: only the study's tasks of pack P (a study over several packs, run one pack at a time).
Expected<void> keep_pack(Study& study, const std::string& pack) {
    if (pack.empty()) return {};
    auto in_pack = resolve_pack(pack, "--pack");
    if (!in_pack) return in_pack.error();
    std::vector<std::string> kept;
    for (const auto& t : study.tasks)
        if (std::find(in_pack->begin(), in_pack->end(), t) != in_pack->end()) kept.push_back(t);
    if (kept.empty())
        return make_error(fmt::format("--pack {}: none of the study's tasks ({}) is in the pack", pack, fmt::join(study.tasks, ", ")));
    study.tasks = std::move(kept);
    return {};
}

// --devices local: under a launcher (mpirun, srun), the device whose index is this rank's place on its
// node (modulo the node's devices: several ranks may share one CPU device), so one rank drives one GPU.
Expected<std::vector<int>> local_rank_device(int count) {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"})
        if (const char* value = std::getenv(name)) return std::vector<int>{std::max(0, std::atoi(value)) % count};
    return make_error("--devices local: this process is not a rank of mpirun or srun (none of OMPI_COMM_WORLD_LOCAL_RANK, "
                      "SLURM_LOCALID, MPI_LOCALRANKID is set); give device indices (\"0,1\") or \"all\"");
}

// --devices as given, against the devices the study's backend has.
Expected<std::vector<int>> pool_devices(const Study& study, const std::string& devices) {
    if (devices.empty()) return std::vector<int>{};
    auto backend_name = resolve_backend_name(study.backend);
    if (!backend_name) return backend_name.error();
    auto backend = make_backend(*backend_name);
    const auto found = backend->probe();
    if (found.empty()) return make_error(fmt::format("--devices: no {} device: {}", *backend_name, backend->unavailable_reason()));
    if (devices == "local") return local_rank_device(static_cast<int>(found.size()));
    return parse_device_list(devices, static_cast<int>(found.size()));
}

// --dry-run --slurm: the sbatch script (study/slurm_script.hpp); one rank per device of the study's
// backend on this machine unless --ranks-per-node says otherwise.
int slurm_script(const Study& study, const SweepCliOptions& o) {
    SlurmJob job;
    job.name = study.name;
    job.study_file = o.file;
    job.db = o.db;
    job.out = o.out;
    job.workdir = std::filesystem::current_path().string();
    job.kevo = self_executable();
    job.nodes = o.nodes;
    auto backend_name = resolve_backend_name(study.backend);
    if (!backend_name) return fail(backend_name.error().message);
    const auto devices = make_backend(*backend_name)->probe();
    job.ranks_per_node = o.ranks_per_node > 0 ? o.ranks_per_node : std::max<int>(1, static_cast<int>(devices.size()));
    job.gpus = !devices.empty() && !devices.front().is_cpu;
    const std::string text = sbatch_script(job);
    if (o.json) print_json({{"sbatch", text}, {"nodes", job.nodes}, {"ranks_per_node", job.ranks_per_node}});
    else std::fputs(text.c_str(), stdout);
    return kExitOk;
}

int dry_run(const Study& study, const SweepCliOptions& o) {
    if (o.slurm) return slurm_script(study, o);
    const auto cells = study_cells(study);
    nlohmann::json doc = {{"study", study}, {"cells", nlohmann::json::array()}};
    std::string text = fmt::format("study {}: {} tasks x {} models x {} strategies x {} seeds = {} cells; budget per cell: "
                                   "{} iterations{}{}{}\n",
                                   study.name, study.tasks.size(), study.models.size(), study.strategies.size(),
                                   study.seeds.size(), cells.size(), study.budget.iterations,
                                   study.budget.max_tokens > 0 ? fmt::format(", {} tokens", study.budget.max_tokens) : "",
                                   study.budget.max_cost_usd > 0 ? fmt::format(", ${:g}", study.budget.max_cost_usd) : "",
                                   study.budget.max_wall_s > 0 ? fmt::format(", {:g} s", study.budget.max_wall_s) : "");
    for (const auto& cell : cells) {
        auto args = run_arguments(study, cell, CellTarget{o.db, o.out, "STUDY_ID", "RUN_ID"});
        args.insert(args.begin(), {"kevo", "run"});
        text += fmt::format("{}\n  {}\n", cell.key, shell_command(args));
        doc["cells"].push_back({{"cell", cell.key}, {"task", cell.task}, {"model", cell.model},
                                {"strategy", cell.strategy}, {"seed", cell.seed}, {"command", args}});
    }
    if (o.json) print_json(doc);
    else say(false, text + "(a dry run: nothing was run or stored)");
    return kExitOk;
}

// The study's aggregates per model, strategy and pack, from the store it was run into.
Expected<std::vector<StudyAggregateRow>> sweep_aggregates(const std::string& db, const std::string& study_id) {
    auto store = Store::open(db, Store::Access::read_only);
    if (!store) return store.error();
    auto data = collect_report_data(**store, ReportScope{ReportScope::Kind::study, study_id});
    if (!data) return data.error();
    auto weights = load_pack_weights("");
    if (!weights) return weights.error();
    data->weights = std::move(*weights);
    return study_aggregates(*data);
}

int run(const SweepCliOptions& o) {
    auto text = read_text_file(o.file);
    if (!text) return fail(fmt::format("study file {}: {}", o.file, text.error().message));
    auto study = parse_study(*text, o.file);
    if (!study) return fail(study.error().message);
    if (o.concurrency > 0) study->concurrency = o.concurrency;
    if (auto only = keep_pack(*study, o.pack); !only) return fail(only.error().message);
    if (o.dry_run) return dry_run(*study, o);

    // Under mpirun every rank runs this; rank 0 alone prints (the whole study's table, after the merge).
    auto ranks = Ranks::join();
    if (!ranks) return fail(ranks.error().message);
    const bool lead = (*ranks)->rank() == 0;
    install_interrupt_handlers();
    const bool live = lead && is_terminal(stderr);
    SweepProgress progress(live, study->budget.iterations);
    SweepOptions options;
    options.study_path = o.file;
    options.file_text = *text;
    options.db = o.db;
    options.out_dir = o.out;
    options.fresh = o.fresh;
    auto devices = pool_devices(*study, o.devices);
    if (!devices) return fail(devices.error().message);
    options.devices = *devices;
    if (lead) options.say = [&](const std::string& line) { say(true, line); };
    if (lead) options.on_progress = [&](const std::vector<CellProgress>& cells) { progress.show(cells); };
    auto summary = run_sweep_on_ranks(*study, options, **ranks);
    progress.finish();
    if (!summary) return fail(summary.error().message);
    if (!lead) return summary->interrupted ? 128 + interrupt_signal() : kExitOk;

    const int failed = summary->count(CellStatus::failed);
    // What continues this study where it stands: the same store, the same folder for kernels and
    // logs (a resume elsewhere would split a cell's log over two folders), the same pack.
    std::vector<std::string> again_words = {"kevo", "sweep", o.file, "--db", o.db, "--out", o.out};
    if (!(*ranks)->single()) again_words.insert(again_words.begin(), {"mpirun", "-np", std::to_string((*ranks)->size())});
    if (!o.pack.empty()) again_words.insert(again_words.end(), {"--pack", o.pack});
    if (!o.devices.empty()) again_words.insert(again_words.end(), {"--devices", o.devices});
    const std::string again = shell_command(again_words);
    auto aggregates = sweep_aggregates(o.db, summary->study_id);
    if (!aggregates) return fail(aggregates.error().message);
    if (o.json) {
        nlohmann::json doc = {{"study_id", summary->study_id}, {"name", study->name}, {"resumed", summary->resumed},
                              {"interrupted", summary->interrupted}, {"devices", summary->devices},
                              {"devices_left", nlohmann::json::object()}, {"cells", nlohmann::json::array()}};
        for (const auto& [device, why] : summary->devices_left) doc["devices_left"][std::to_string(device)] = why;
        for (const auto& c : summary->cells) doc["cells"].push_back(cell_json(c));
        doc["aggregates"] = study_aggregates_json(*aggregates);
        print_json(doc);
    }
    // The final table, unless the live one is already on the same screen.
    if (!(live && same_destination(stdout, stderr)) || o.json) say(o.json, sweep_table(summary->cells, study->budget.iterations));
    say(o.json, render_study_aggregates_text(*aggregates));
    say(o.json, fmt::format("study {} ({}): {} of {} cells finished, {} failed{}; logs in {}/sweep-{}", study->name,
                          summary->study_id, summary->count(CellStatus::finished), summary->cells.size(), failed,
                          summary->interrupted ? ", interrupted" : "", o.out, summary->study_id));
    if (summary->interrupted) {
        say(o.json, fmt::format("resume with   {}", again));
        return 128 + interrupt_signal();
    }
    if (failed > 0) {
        say(o.json, fmt::format("a failed cell is retried (its run resumed) by   {}", again));
        return kExitRejected;
    }
    return kExitOk;
}

}  // namespace

void setup_sweep(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("sweep", "run a study (STUDY.toml: tasks x models x strategies x seeds); resumable");
    auto o = std::make_shared<SweepCliOptions>();
    cmd->add_option("STUDY", o->file, "the study file (TOML; see docs/study.md)")->required();
    cmd->add_option("--db", o->db, "SQLite store for the study and its runs")->capture_default_str();
    cmd->add_option("--out", o->out, "folder for the runs' best kernels and the sweep's logs")->capture_default_str();
    cmd->add_option("--concurrency", o->concurrency, "runs in flight on each device (default: the study's, else 1 on a CPU device, 4 on a GPU)")
        ->check(whole_range(1, 64));
    cmd->add_option("--pack", o->pack, "run only the study's tasks of this pack (sci, ml)");
    cmd->add_option("--devices", o->devices,
                    "spread the runs over these devices of the study's backend (\"0,1,3\" or \"all\"), the concurrency "
                    "on each; a device that faults leaves the pool and its run is placed again elsewhere; \"local\" under "
                    "mpirun or srun: the device of this rank's place on its node (default: the study's one device)");
    cmd->add_flag("--new", o->fresh, "start a fresh study even where an unfinished one of this name is in the store");
    auto* dry = cmd->add_flag("--dry-run", o->dry_run, "print the matrix and each cell's kevo run command; run nothing");
    auto* slurm = cmd->add_flag("--slurm", o->slurm, "with --dry-run: print an sbatch script that runs the study through "
                                                      "mpirun, one rank per device (docs/scale.md)")
                      ->needs(dry);
    cmd->add_option("--nodes", o->nodes, "--slurm: nodes of the job")->check(whole_range(1, 100000))->capture_default_str()->needs(slurm);
    cmd->add_option("--ranks-per-node", o->ranks_per_node,
                    "--slurm: ranks (devices) per node (default: the study backend's devices on this machine)")
        ->check(whole_range(1, 1024))
        ->needs(slurm);
    add_json_option(*cmd, o->json);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
