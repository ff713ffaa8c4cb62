// `kevo bench`: the suite's seeds and best-known kernels on one device, checked, timed and scored,
// with vendor peers beside them (CLI.md "kevo bench").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "backend/registry.hpp"
#include "bench/bench.hpp"
#include "bench/bench_aggregates.hpp"
#include "bench/bench_render.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/interrupt.hpp"
#include "cli/live_status.hpp"
#include "core/files.hpp"
#include "eval/evaluator_factory.hpp"
#include "pack/pack.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

// The bench's defaults live in BenchOptions (bench/bench.hpp); the CLI takes them from there.
const BenchOptions kBenchDefaults{};

struct BenchCliOptions {
    DeviceOptions device;
    std::string profile, markdown, kernels_dir, state, pack, weights;
    std::string language;  // empty: the backend's own
    std::vector<std::string> tasks;
    std::vector<std::string> check_profiles;  // empty: every profile up to the timed one
    bool check_profiles_given = false;
    int warmup = kBenchDefaults.warmup, repeat = kBenchDefaults.repeat;
    double timeout = kBenchDefaults.timeout_s;
    uint64_t seed = 1;
    bool json = false, no_peers = false;
};

std::string command_line(const BenchCliOptions& o, const std::string& backend, const std::string& profile) {
    std::string cmd = fmt::format("kevo bench --backend {} --device {} --profile {}", backend, o.device.device, profile);
    if (!o.language.empty()) cmd += " --language " + o.language;
    if (!o.pack.empty()) cmd += " --pack " + o.pack;
    if (!o.tasks.empty()) cmd += fmt::format(" --tasks {}", fmt::join(o.tasks, ","));
    if (!o.weights.empty()) cmd += " --weights " + o.weights;
    cmd += fmt::format(" --check-profiles {}", o.check_profiles.empty() ? "none" : fmt::format("{}", fmt::join(o.check_profiles, ",")));
    cmd += fmt::format(" --warmup {} --repeat {} --seed {}", o.warmup, o.repeat, o.seed);
    if (o.no_peers) cmd += " --no-peers";
    if (!o.kernels_dir.empty()) cmd += " --kernels " + o.kernels_dir;
    if (!o.markdown.empty()) cmd += " --markdown " + o.markdown;
    return cmd;
}

// Why each file in --kernels DIR is not benched: only <task>.<suffix> of a benched task is.
std::vector<std::string> unused_kernel_files(const std::string& dir, const std::vector<std::string>& benched,
                                             const std::string& suffix) {
    std::vector<std::string> unused;
    if (dir.empty()) return unused;
    const auto known = task_names();
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.is_regular_file()) files.push_back(entry.path().filename().string());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        const auto path = std::filesystem::path(file);
        const std::string stem = path.stem().string(), ext = path.extension().string();
        const bool is_task = std::find(known.begin(), known.end(), stem) != known.end();
        const bool benched_task = std::find(benched.begin(), benched.end(), stem) != benched.end();
        if (ext == "." + suffix && benched_task) continue;  // used
        std::string why;
        const Language of_file = ext.size() > 1 ? language_for_suffix(ext.substr(1)) : Language();
        if (!of_file) {
            why = fmt::format("not a kernel file (expected <task>.{})", suffix);
        } else if (ext != "." + suffix) {
            why = fmt::format("a {} kernel; this bench compiles .{} files", of_file->short_name, suffix);
        } else if (is_task) {
            why = fmt::format("task {} is not among the benched tasks (--tasks, --pack)", stem);
        } else {
            why = fmt::format("no task is named '{}'", stem);
            if (auto near = nearest_word(stem, known)) why += fmt::format(" (did you mean {}.{}?)", *near, suffix);
            why += fmt::format("; expected <task>.{} with <task> one of: {}", suffix, fmt::join(known, ", "));
        }
        unused.push_back(fmt::format("{}: {}", file, why));
    }
    return unused;
}

// The tasks to bench: --tasks, else --pack's tasks, else the suite. With both, every --tasks entry
// must be in the pack (a task of another pack is an error, not silently dropped).
Expected<std::vector<std::string>> benched_tasks(const BenchCliOptions& o) {
    const auto known = task_names();
    for (const auto& t : o.tasks)
        if (std::find(known.begin(), known.end(), t) == known.end())
            return make_error(fmt::format("--tasks: unknown task '{}'; expected some of: {}", t, fmt::join(known, ", ")));
    if (o.pack.empty()) return o.tasks.empty() ? known : o.tasks;
    auto in_pack = resolve_pack(o.pack, "--pack");
    if (!in_pack) return in_pack.error();
    for (const auto& t : o.tasks)
        if (std::find(in_pack->begin(), in_pack->end(), t) == in_pack->end())
            return make_error(fmt::format("--tasks: task '{}' is in pack {}, not in --pack {}", t, task_pack(t), o.pack));
    if (in_pack->empty()) return make_error(fmt::format("--pack {}: the pack has no task in this build yet", o.pack));
    return o.tasks.empty() ? *in_pack : o.tasks;
}

// With a language not every task has a seed: the tasks named must, and the whole list keeps those
// that do (the rest are named on stderr).
Expected<std::vector<std::string>> with_seeds_in(const std::vector<std::string>& tasks, Language language, bool named) {
    const std::string seed = "seed." + language->suffix;
    std::vector<std::string> kept, without;
    for (const auto& t : tasks) (task_file(t, seed).empty() ? without : kept).push_back(t);
    if (without.empty()) return kept;
    if (named)
        return make_error(fmt::format("--tasks: {} {} no {} seed ({}); the tasks with one: {}", fmt::join(without, ", "),
                                      without.size() == 1 ? "has" : "have", language->display_name, seed,
                                      fmt::join(tasks_shipping(seed), ", ")));
    if (kept.empty()) return make_error(fmt::format("no task of the list has a {} seed ({})", language->display_name, seed));
    say(true, fmt::format("note: no {} seed, not benched: {}", language->display_name, fmt::join(without, ", ")));
    return kept;
}

// The timed profile must be one every task has: trace is the ML pack's alone. Tasks named with
// --tasks must have it; from a whole list, those without are left out and named on stderr.
Expected<std::vector<std::string>> with_profile(const std::vector<std::string>& tasks, const std::string& profile, bool named) {
    std::vector<std::string> kept, without;
    for (const auto& t : tasks) {
        auto task = make_task(t);
        if (!task) return task.error();
        ((*task)->spec().profiles.count(profile) ? kept : without).push_back(t);
    }
    if (without.empty()) return kept;
    if (named || kept.empty())
        return make_error(fmt::format("--profile {}: {} {} no {} profile (it is the ML pack's: --pack ml)", profile,
                                      fmt::join(without, ", "), without.size() == 1 ? "has" : "have", profile));
    say(true, fmt::format("note: no {} profile, not benched: {}", profile, fmt::join(without, ", ")));
    return kept;
}

// A bench stopped by a signal: one line that says so (after what was printed so far), and with
// --json the report so far (status "interrupted"); exit 128 + the signal.
int stop_interrupted(const BenchReport& report, const BenchCliOptions& o, const std::vector<std::string>& unused) {
    std::string line = "kevo: bench " + report.interrupted;
    line += o.state.empty() ? "; a rerun starts over (--state FILE keeps the progress for a resume)"
                            : fmt::format("; resume with the same command (--state {})", o.state);
    say(true, line);
    if (o.json) {
        auto doc = to_json(report);
        doc["unused_kernel_files"] = unused;
        doc["aggregates"] = nullptr;  // not over a bench cut short
        print_json(doc);
    }
    return 128 + interrupt_signal();
}

int run(BenchCliOptions& o) {
    auto tasks = benched_tasks(o);
    if (!tasks) return fail(tasks.error().message);
    auto weights = load_pack_weights(o.weights);
    if (!weights) return fail(weights.error().message);
    if (o.check_profiles.size() == 1 && o.check_profiles[0] == "none") o.check_profiles.clear();
    for (const auto& p : o.check_profiles)
        if (std::find(kProfileNames.begin(), kProfileNames.end(), p) == kProfileNames.end())
            return fail(fmt::format("--check-profiles: unknown profile '{}'; expected small, paper, large, trace or none", p));
    auto backend_name = resolve_backend_name(o.device.backend);
    if (!backend_name) return fail(backend_name.error().message);
    auto language = backend_language(o.language, *backend_name);
    if (!language) return fail("--language: " + language.error().message);
    if (!o.language.empty()) {
        tasks = with_seeds_in(*tasks, *language, !o.tasks.empty());
        if (!tasks) return fail(tasks.error().message);
    }

    EvaluatorOptions options;
    options.backend = *backend_name;
    options.device = o.device.device;
    LiveStatus live(!o.json && is_terminal(stderr));  // stage lines overwrite each other on a terminal
    options.progress = [&](const std::string& line) { live.status("    " + line); };
    auto evaluator = make_evaluator(options);
    auto info = evaluator->device();
    if (!info) return fail(info.error().message);

    BenchOptions bench;
    bench.profile = resolve_profile(o.profile, *info);
    tasks = with_profile(*tasks, bench.profile, !o.tasks.empty());
    if (!tasks) return fail(tasks.error().message);
    bench.tasks = *tasks;
    if (!o.check_profiles_given) {
        // Every profile up to the timed one: a CPU timing `small` is not made to run `large`, and
        // one timing `trace` (production shapes, most of them below large) is not either.
        for (const auto& p : kProfileNames) {
            if (p == "large" && bench.profile == kTraceProfile) continue;
            o.check_profiles.push_back(p);
            if (o.check_profiles.back() == bench.profile) break;
        }
    }
    bench.check_profiles = o.check_profiles;
    bench.warmup = o.warmup;
    bench.repeat = o.repeat;
    bench.timeout_s = o.timeout;
    bench.seed = o.seed;
    bench.peers = !o.no_peers;
    bench.kernels_dir = o.kernels_dir;
    bench.state_path = o.state;
    bench.language = (*language)->name;
    say(true, fmt::format("kevo bench on {} ({}), {} kernels, profile {}", info->name, *backend_name,
                          (*language)->display_name, bench.profile));
    const auto& benched = *tasks;
    const std::string suffix = (*language)->suffix;
    const auto unused = unused_kernel_files(o.kernels_dir, benched, suffix);
    for (const auto& file : unused) say(true, fmt::format("warning: --kernels {}: not benched: {}", o.kernels_dir, file));

    // The peers run in this process on their own handle to the device, opened on first use.
    std::unique_ptr<Backend> peer_backend;
    std::unique_ptr<Device> peer_device;
    auto open_peer_device = [&]() -> Expected<Device*> {
        if (!peer_device) {
            peer_backend = make_backend(*backend_name);
            if (peer_backend->probe().empty()) return make_error(peer_backend->unavailable_reason());
            auto d = peer_backend->open(o.device.device);
            if (!d) return d.error();
            peer_device = std::move(*d);
        }
        return peer_device.get();
    };
    // Rows are printed as tasks complete: on stderr beside the progress, or, when stdout is the
    // same terminal or file, on stdout once (the end then adds only the summary).
    const bool rows_once = !o.json && same_destination(stdout, stderr);
    const BenchLayout layout = bench_layout(benched, bench.profile);
    bool header_printed = false;
    BenchCallbacks callbacks;
    callbacks.peer_device = open_peer_device;
    callbacks.progress = [&](const std::string& line) { live.status("  " + line); };
    callbacks.notice = [&](const std::string& line) { live.print(stderr, "  " + line); };
    callbacks.task_done = [&](const BenchTask& task) {
        std::FILE* out = rows_once ? stdout : stderr;
        if (!header_printed) live.print(out, render_bench_header(layout));
        header_printed = true;
        live.print(out, render_bench_task_text(task, layout));
    };
    install_interrupt_handlers();
    auto report = run_bench(*evaluator, bench, callbacks);
    live.clear();
    if (!report) return fail_unless_interrupted(report.error().message);
    if (!report->interrupted.empty()) return stop_interrupted(*report, o, unused);

    const BenchAggregates aggregates = bench_aggregates(*report, *weights);
    if (!o.markdown.empty()) {
        const auto text = render_bench_markdown(*report, command_line(o, *backend_name, bench.profile)) +
                          render_bench_aggregates_markdown(aggregates);
        if (auto w = write_file_atomic(o.markdown, text); !w) return fail(w.error().message);
        say(true, "wrote " + o.markdown);
    }
    // The rows are on screen (or in the log) already unless stdout is a destination of its own.
    const bool rows_shown = o.json || rows_once;
    say(o.json, (rows_shown ? render_bench_summary(*report) : render_bench_text(*report)) +
                    render_bench_aggregates_text(aggregates));
    if (o.json) {
        auto doc = to_json(*report);
        doc["unused_kernel_files"] = unused;
        doc["aggregates"] = to_json(aggregates);
        print_json(doc);
    }
    return report->ok() ? kExitOk : kExitRejected;
}

}  // namespace

void setup_bench(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("bench", "seeds and best-known kernels of the suite, checked, timed and scored, with peers");
    auto o = std::make_shared<BenchCliOptions>();
    add_device_options(*cmd, o->device);
    add_profile_option(*cmd, o->profile);
    add_json_option(*cmd, o->json);
    cmd->add_option("--tasks", o->tasks, "tasks to bench, comma-separated (default: the whole suite, or --pack's tasks)")
        ->delimiter(',');
    cmd->add_option("--language", o->language,
                    "bench the seeds and best-known kernels in this kernel language (default: the backend's own; "
                    "triton runs on cuda)")
        ->check(CLI::IsMember(language_names()));
    cmd->add_option("--pack", o->pack, "bench this pack's tasks (sci, ml); with --tasks, each must be in the pack");
    cmd->add_option("--weights", o->weights,
                    "a weights file (docs/packs.md) used for its pack's S_agg in place of the pack's shipped one")
        ->check(CLI::ExistingFile);
    auto* checks = cmd->add_option("--check-profiles", o->check_profiles,
                                   "profiles at whose every size the best-known kernels are checked before timing "
                                   "(default: every profile up to the timed one, e.g. small,paper,large for large; none "
                                   "to skip)")
                       ->delimiter(',');
    cmd->add_option("--warmup", o->warmup, "untimed runs before timing")->capture_default_str()->check(whole_range(0, 1000));
    cmd->add_option("--repeat", o->repeat, "timed runs per size")->capture_default_str()->check(whole_range(1, 10000));
    cmd->add_option("--timeout", o->timeout, "deadline per evaluation in seconds")
        ->capture_default_str()
        ->check(finite_range(1.0, 86400.0));
    cmd->add_option("--seed", o->seed, "seed of the correctness inputs (default 1)");
    cmd->add_option("--kernels", o->kernels_dir,
                    "folder of your own kernels, named <task>.cu, <task>.cl or <task>.py (the bench's language), "
                    "benched in place of the shipped best-known ones")
        ->check(CLI::ExistingDirectory);
    cmd->add_option("--state", o->state,
                    "save progress to this file after every step; a bench cut short resumes from it when run again");
    cmd->add_flag("--no-peers", o->no_peers, "skip the vendor and hand-written peers");
    cmd->add_option("--markdown", o->markdown, "also write the table as a markdown document to this file");
    cmd->callback([&exit_code, o, checks] {
        o->check_profiles_given = checks->count() > 0;
        exit_code = run(*o);
    });
}

}  // namespace kevo::cli
