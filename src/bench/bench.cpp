// run_bench: checks, then evaluations and peers, task by task (see bench.hpp).
#include "bench/bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>

#include "bench/bench_state.hpp"
#include "core/files.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

nlohmann::json size_json(const SizeResult& s) {
    nlohmann::json j = {{"correct", s.correct}, {"timed", s.timed}};
    if (!s.correct) j["error"] = s.diagnostics;
    if (s.timed) {
        j["seconds"] = s.seconds;
        j["seconds_min"] = s.seconds_min;
        j["seconds_max"] = s.seconds_max;
        j["cv"] = s.cv;
        j["achieved"] = s.achieved;
        j["unit"] = s.unit;
        j["fraction_static"] = s.ceiling_static > 0 ? s.achieved / s.ceiling_static : 0.0;
        j["fraction_workload"] = s.ceiling_workload > 0 ? s.achieved / s.ceiling_workload : 0.0;
        j["implausible"] = s.implausible;
    }
    return j;
}

nlohmann::json kernel_json(const EvalResult& r) {
    nlohmann::json j = {{"verdict", verdict_name(r.verdict)}, {"defines", r.defines}};
    if (r.score) j["score"] = *r.score;
    if (r.heldout_fraction) j["heldout_fraction"] = *r.heldout_fraction;
    if (r.verdict != Verdict::ok) j["diagnostics"] = r.diagnostics;
    return j;
}

}  // namespace

std::optional<double> BenchSize::speedup() const {
    if (!seed || !best || !seed->timed || !best->timed || best->seconds <= 0) return std::nullopt;
    return seed->seconds / best->seconds;
}

bool BenchTask::ok() const {
    if (!seed || seed->verdict != Verdict::ok) return false;
    if (best_missing.empty()) {
        if (!best || best->verdict != Verdict::ok) return false;
        for (const auto& c : checks)
            if (c.verdict != Verdict::ok) return false;
    }
    return true;
}

bool BenchReport::ok() const {
    for (const auto& t : tasks)
        if (!t.ok()) return false;
    return true;
}

Expected<BenchReport> run_bench(Evaluator& evaluator, const BenchOptions& options, const BenchCallbacks& callbacks) {
    const auto started = std::chrono::steady_clock::now();
    // Progress lines carry the elapsed time, so a long bench shows where its time goes.
    auto progress = [&](const std::string& line) {
        if (!callbacks.progress) return;
        const auto s = static_cast<long>(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        callbacks.progress(fmt::format("[{:02}:{:02}] {}", s / 60, s % 60, line));
    };
    auto info = evaluator.device();
    if (!info) return info.error();
    BenchReport report;
    report.device = *info;
    report.profile = options.profile;
    report.check_profiles = options.check_profiles;
    report.started = utc_now();
    const std::vector<std::string> names = options.tasks.empty() ? task_names() : options.tasks;
    const std::string suffix = language_suffix(info->backend == "cuda" ? Language::cuda : Language::opencl);

    // Fractions are of measured ceilings: measure them now unless a measurement is cached.
    report.ceilings = load_cached_calibration(*info);
    if (!report.ceilings) {
        progress("no measured ceilings for this device yet: calibrating (once; the result is cached)");
        auto measured = evaluator.calibrate(false);
        if (!measured) return measured.error();
        report.ceilings = *measured;
    }
    const BenchReport::Invocation this_invocation{report.started, report.ceilings->bandwidth_gbs, report.ceilings->fp32_gflops};

    auto request_for = [&](const std::string& task, const std::string& profile, std::string source) {
        EvalRequest r;
        r.task = task;
        r.profile = profile;
        r.source = std::move(source);
        r.sizes = SizeSelection::all;
        r.warmup = options.warmup;
        r.repeat = options.repeat;
        r.timeout_s = options.timeout_s;
        r.seed = options.seed;
        return r;
    };

    std::vector<std::string> best_sources;  // parallel to report.tasks
    for (const auto& name : names) {
        auto task = make_task(name);
        if (!task) return task.error();
        BenchTask bt;
        bt.task = name;
        bt.bound = (*task)->spec().bound == Bound::bandwidth ? "bandwidth" : "compute";
        report.tasks.push_back(std::move(bt));
        best_sources.push_back({});
        if (!options.kernels_dir.empty()) {
            const auto path = std::filesystem::path(options.kernels_dir) / fmt::format("{}.{}", name, suffix);
            if (std::filesystem::exists(path)) {
                auto text = read_text_file(path.string());
                if (!text) return text.error();
                best_sources.back() = *text;
                report.tasks.back().best_origin = path.string();
                continue;
            }
        }
        best_sources.back() = std::string(task_file(name, "best." + suffix));
        report.tasks.back().best_origin = fmt::format("tasks/{}/best.{}", name, suffix);
        if (best_sources.back().empty())
            report.tasks.back().best_missing = fmt::format("no best-known kernel best.{} for {}", suffix, info->backend);
    }

    if (!options.state_path.empty() && std::filesystem::exists(options.state_path)) {
        auto text = read_text_file(options.state_path);
        if (!text) return text.error();
        auto restored = restore_bench_state(nlohmann::json::parse(*text, nullptr, false), options, report);
        if (!restored)
            return make_error(fmt::format("--state {}: {}; delete it or name another file", options.state_path, restored.error().message));
        progress(fmt::format("resuming from {}", options.state_path));
    }
    report.invocations.push_back(this_invocation);
    auto save = [&]() -> Expected<void> {
        if (options.state_path.empty()) return {};
        return write_file_atomic(options.state_path, bench_state_json(report, options).dump(1));
    };

    // Phase 1: every best-known kernel, every size of every check profile, correctness only.
    for (size_t i = 0; i < report.tasks.size(); ++i) {
        auto& bt = report.tasks[i];
        if (!bt.best_missing.empty()) continue;
        for (const auto& profile : options.check_profiles) {
            if (std::any_of(bt.checks.begin(), bt.checks.end(), [&](const BenchCheck& c) { return c.profile == profile; }))
                continue;
            progress(fmt::format("{}: checking {} at every {} size", bt.task, bt.best_origin, profile));
            auto request = request_for(bt.task, profile, best_sources[i]);
            request.check_only = true;
            const auto start = std::chrono::steady_clock::now();
            auto result = evaluator.evaluate(request);
            if (!result) return result.error();
            BenchCheck check{profile, result->verdict, result->verdict == Verdict::ok ? "" : result->diagnostics};
            check.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            progress(fmt::format("{}: best at {}: {}", bt.task, profile, verdict_name(check.verdict)));
            bt.checks.push_back(std::move(check));
            if (auto saved = save(); !saved) return saved.error();
        }
    }

    // Phase 2: seed and best in full at the timed profile, then the peers.
    std::unique_ptr<CacheFlusher> flusher;  // on the peers' device; released before it
    for (size_t i = 0; i < report.tasks.size(); ++i) {
        auto& bt = report.tasks[i];
        if (bt.seed) {  // restored from the state file
            if (callbacks.task_done) callbacks.task_done(bt);
            continue;
        }
        auto task = make_task(bt.task);
        progress(fmt::format("{}: seed at {}", bt.task, options.profile));
        auto seed = evaluator.evaluate(request_for(bt.task, options.profile, std::string(task_file(bt.task, "seed." + suffix))));
        if (!seed) return seed.error();
        if (bt.best_missing.empty()) {
            progress(fmt::format("{}: best at {}", bt.task, options.profile));
            auto best = evaluator.evaluate(request_for(bt.task, options.profile, best_sources[i]));
            if (!best) return best.error();
            bt.best = std::move(*best);
        }
        bt.seed = std::move(*seed);
        const auto& sizes = (*task)->spec().profiles.at(options.profile);
        std::map<std::string, std::vector<PeerTiming>> peers;
        if (options.peers && task_has_peers(bt.task)) {
            for (const auto& size : sizes) {
                progress(fmt::format("{}: peers at {}", bt.task, size.label));
                auto device = callbacks.peer_device();
                if (!device) {
                    peers[size.label].push_back(PeerTiming{"peers", "", 0, 0, 0, device.error().message});
                    continue;
                }
                if (!flusher) flusher = std::make_unique<CacheFlusher>(**device);
                peers[size.label] = time_peers(**device, *flusher, bt.task, size, options.warmup, options.repeat);
            }
        }
        fill_bench_sizes(bt, sizes, peers);
        if (auto saved = save(); !saved) return saved.error();
        if (callbacks.task_done) callbacks.task_done(bt);
    }
    return report;
}

nlohmann::json invocations_json(const BenchReport& report) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& i : report.invocations)
        list.push_back({{"started", i.started}, {"bandwidth_gbs", i.bandwidth_gbs}, {"fp32_gflops", i.fp32_gflops}});
    return list;
}

nlohmann::json to_json(const BenchReport& report) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : report.tasks) {
        nlohmann::json jt = {{"task", t.task}, {"bound", t.bound}, {"ok", t.ok()}};
        if (t.seed) jt["seed"] = kernel_json(*t.seed);
        if (t.best) jt["best"] = kernel_json(*t.best);
        if (!t.best_missing.empty()) jt["best_missing"] = t.best_missing;
        else jt["best_origin"] = t.best_origin;
        jt["checks"] = nlohmann::json::array();
        for (const auto& c : t.checks) {
            nlohmann::json jc = {{"profile", c.profile}, {"verdict", verdict_name(c.verdict)}, {"seconds", c.seconds}};
            if (!c.diagnostics.empty()) jc["diagnostics"] = c.diagnostics;
            jt["checks"].push_back(jc);
        }
        jt["sizes"] = nlohmann::json::array();
        for (const auto& s : t.sizes) {
            nlohmann::json js = {{"label", s.label}, {"heldout", s.heldout}};
            if (s.seed) js["seed"] = size_json(*s.seed);
            if (s.best) js["best"] = size_json(*s.best);
            if (auto sp = s.speedup()) js["speedup"] = *sp;
            js["peers"] = nlohmann::json::array();
            for (const auto& p : s.peers) {
                nlohmann::json jp = {{"name", p.name}, {"library", p.library}};
                if (p.ran()) {
                    jp["seconds"] = p.seconds;
                    jp["seconds_min"] = p.seconds_min;
                    jp["seconds_max"] = p.seconds_max;
                    if (s.best && s.best->timed && s.best->seconds > 0) jp["best_speedup"] = p.seconds / s.best->seconds;
                } else {
                    jp["error"] = p.error;
                }
                js["peers"].push_back(jp);
            }
            jt["sizes"].push_back(js);
        }
        tasks.push_back(jt);
    }
    nlohmann::json ceilings = nullptr;
    if (report.ceilings)
        ceilings = {{"source", report.ceilings->source}, {"bandwidth_gbs", report.ceilings->bandwidth_gbs},
                    {"fp32_gflops", report.ceilings->fp32_gflops}, {"measured_at", report.ceilings->measured_at}};
    return {{"device", report.device.name},
            {"ceilings", ceilings},
            {"backend", report.device.backend},
            {"driver", report.device.driver},
            {"profile", report.profile},
            {"check_profiles", report.check_profiles},
            {"started", report.started},
            {"invocations", invocations_json(report)},
            {"ok", report.ok()},
            {"tasks", tasks}};
}

}  // namespace kevo
