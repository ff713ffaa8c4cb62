// run_bench: checks, then evaluations and peers, task by task (see bench.hpp).
#include "bench/bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>

#include "bench/bench_state.hpp"
#include "core/clock.hpp"
#include "core/files.hpp"
#include "core/interrupt.hpp"
#include "core/hash.hpp"
#include "eval/ceiling_ratchet.hpp"
#include "task/registry.hpp"

namespace kevo {

std::optional<double> BenchSize::speedup() const {
    if (!seed || !best || !seed->timed || !best->timed || best->seconds <= 0) return std::nullopt;
    return seed->seconds / best->seconds;
}

std::optional<double> BenchSize::speedup_over(const PeerTiming& peer) const {
    if (!peer.right() || !best || !best->timed || best->seconds <= 0) return std::nullopt;
    return peer.seconds / best->seconds;
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

namespace {

// One bench from start to end: the report being built, the kernels it runs, and the phases.
class BenchRun {
public:
    BenchRun(Evaluating& evaluator, const BenchOptions& options, const BenchCallbacks& callbacks)
        : evaluator_(evaluator), options_(options), callbacks_(callbacks), clock_start_(std::chrono::steady_clock::now()) {}

    Expected<BenchReport> run() {
        if (auto ok = phases(); !ok) {
            if (!interrupt_requested()) return ok.error();
            report_.interrupted = fmt::format("interrupted by {}", interrupt_signal_name());
        }
        return std::move(report_);
    }

private:
    Expected<void> phases() {
        if (auto ok = start(); !ok) return ok.error();
        if (auto ok = list_tasks(); !ok) return ok.error();
        if (auto ok = restore(); !ok) return ok.error();
        report_.invocations.push_back(this_invocation_);
        if (auto ok = check_best_kernels(); !ok) return ok.error();
        for (size_t i = 0; i < report_.tasks.size(); ++i)
            if (auto ok = time_task(i); !ok) return ok.error();
        return {};
    }

    // Between steps: a signal stops the bench before the next evaluation starts.
    static Expected<void> not_interrupted() {
        if (interrupt_requested()) return make_error(fmt::format("interrupted by {}", interrupt_signal_name()));
        return {};
    }

    Evaluating& evaluator_;
    const BenchOptions& options_;
    const BenchCallbacks& callbacks_;
    const std::chrono::steady_clock::time_point clock_start_;
    BenchReport report_;
    BenchReport::Invocation this_invocation_;
    Language language_;                     // the kernels' language
    std::string suffix_;                    // its suffix: "cu", "cl" or "py"
    std::vector<std::string> best_sources_;  // parallel to report_.tasks
    std::unique_ptr<CacheFlusher> flusher_;  // on the peers' device; released before it

    // Progress lines carry the elapsed time, so a long bench shows where its time goes.
    void progress(const std::string& line) const {
        if (!callbacks_.progress) return;
        const auto s = static_cast<long>(std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start_).count());
        callbacks_.progress(fmt::format("[{:02}:{:02}] {}", s / 60, s % 60, line));
    }

    // A line the user must see whatever else scrolls by (kept apart from the progress lines).
    void notice(const std::string& line) const {
        if (callbacks_.notice) callbacks_.notice(line);
        else progress(line);
    }

    EvalRequest request_for(const std::string& task, const std::string& profile, std::string source,
                            std::string source_name) const {
        EvalRequest r;
        r.task = task;
        r.profile = profile;
        r.source = std::move(source);
        r.source_name = std::move(source_name);
        r.language = language_->name;
        r.sizes = SizeSelection::all;
        r.warmup = options_.warmup;
        r.repeat = options_.repeat;
        r.timeout_s = options_.timeout_s;
        r.seed = options_.seed;
        return r;
    }

    Expected<void> save() const {
        if (options_.state_path.empty()) return {};
        return write_file_atomic(options_.state_path, bench_state_json(report_, options_).dump(1));
    }

    // The device, and its measured ceilings: fractions are of measured ceilings, so measure them
    // now unless a measurement is cached.
    Expected<void> start() {
        auto info = evaluator_.device();
        if (!info) return info.error();
        report_.device = *info;
        report_.profile = options_.profile;
        report_.check_profiles = options_.check_profiles;
        report_.started = utc_now_iso8601();
        auto language = backend_language(options_.language, info->backend);
        if (!language) return language.error();
        language_ = *language;
        suffix_ = language_->suffix;
        report_.language = language_->name;
        report_.ceilings = load_cached_calibration(*info);
        if (!report_.ceilings) {
            progress("no measured ceilings for this device yet: calibrating (once; the result is cached)");
            auto measured = evaluator_.calibrate(false);
            if (!measured) return measured.error();
            report_.ceilings = *measured;
        }
        this_invocation_ = {report_.started, report_.ceilings->bandwidth_gbs, report_.ceilings->fp32_gflops};
        return {};
    }

    // The tasks in order, each with its best-known kernel: from --kernels, else the shipped one.
    Expected<void> list_tasks() {
        const std::vector<std::string> names = options_.tasks.empty() ? task_names() : options_.tasks;
        for (const auto& name : names) {
            auto task = make_task(name);
            if (!task) return task.error();
            BenchTask bt;
            bt.task = name;
            bt.bound = (*task)->spec().bound == Bound::bandwidth ? "bandwidth" : "compute";
            std::string source;
            const auto own = options_.kernels_dir.empty()
                                 ? std::filesystem::path()
                                 : std::filesystem::path(options_.kernels_dir) / fmt::format("{}.{}", name, suffix_);
            if (!own.empty() && std::filesystem::exists(own)) {
                auto text = read_text_file(own);
                if (!text) return text.error();
                source = std::move(*text);
                bt.best_origin = own.string();
            } else {
                source = std::string(task_file(name, "best." + suffix_));
                bt.best_origin = fmt::format("tasks/{}/best.{}", name, suffix_);
                if (source.empty())
                    bt.best_missing = fmt::format("no best-known kernel best.{} for {}", suffix_, report_.device.backend);
            }
            bt.seed_hash = hex64(hash64(task_file(name, "seed." + suffix_)));
            if (bt.best_missing.empty()) bt.best_hash = hex64(hash64(source));
            report_.tasks.push_back(std::move(bt));
            best_sources_.push_back(std::move(source));
        }
        return {};
    }

    Expected<void> restore() {
        if (options_.state_path.empty() || !std::filesystem::exists(options_.state_path)) return {};
        auto text = read_text_file(options_.state_path);
        if (!text) return text.error();
        auto restored = restore_bench_state(nlohmann::json::parse(*text, nullptr, false), options_, report_);
        if (!restored)
            return make_error(fmt::format("--state {}: {}; delete it or name another file", options_.state_path,
                                          restored.error().message));
        progress(fmt::format("resuming from {}", options_.state_path));
        for (const auto& line : *restored) notice(line);
        return {};
    }

    // Phase 1: every best-known kernel, every size of every check profile, correctness only.
    Expected<void> check_best_kernels() {
        for (size_t i = 0; i < report_.tasks.size(); ++i) {
            auto& bt = report_.tasks[i];
            if (!bt.best_missing.empty()) continue;
            auto task = make_task(bt.task);
            if (!task) return task.error();
            for (const auto& profile : options_.check_profiles) {
                if (!(*task)->spec().profiles.count(profile)) continue;  // trace: the ML pack's tasks only
                if (std::any_of(bt.checks.begin(), bt.checks.end(), [&](const BenchCheck& c) { return c.profile == profile; }))
                    continue;  // done in an earlier invocation
                if (auto go = not_interrupted(); !go) return go;
                progress(fmt::format("{}: checking {} at every {} size", bt.task, bt.best_origin, profile));
                auto request = request_for(bt.task, profile, best_sources_[i], bt.best_origin);
                request.check_only = true;
                const auto start = std::chrono::steady_clock::now();
                auto result = evaluator_.evaluate(request);
                if (!result) return result.error();
                BenchCheck check{profile, result->verdict, result->verdict == Verdict::ok ? "" : result->diagnostics};
                check.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                progress(fmt::format("{}: best at {}: {}", bt.task, profile, verdict_name(check.verdict)));
                bt.checks.push_back(std::move(check));
                if (auto saved = save(); !saved) return saved.error();
            }
        }
        return {};
    }

    // Phase 2 for one task: seed and best in full at the timed profile, then the peers.
    Expected<void> time_task(size_t i) {
        auto& bt = report_.tasks[i];
        if (auto go = not_interrupted(); !go) return go;
        if (!bt.seed) {  // else restored from the state file
            auto task = make_task(bt.task);
            if (!task) return task.error();
            progress(fmt::format("{}: seed at {}", bt.task, options_.profile));
            auto seed = evaluator_.evaluate(request_for(bt.task, options_.profile, std::string(task_file(bt.task, "seed." + suffix_)),
                                                       fmt::format("tasks/{}/seed.{}", bt.task, suffix_)));
            if (!seed) return seed.error();
            std::optional<EvalResult> best;
            if (bt.best_missing.empty()) {
                progress(fmt::format("{}: best at {}", bt.task, options_.profile));
                auto evaluated = evaluator_.evaluate(request_for(bt.task, options_.profile, best_sources_[i], bt.best_origin));
                if (!evaluated) return evaluated.error();
                best = std::move(*evaluated);
            }
            const auto& sizes = (*task)->spec().profiles.at(options_.profile);
            auto peers = time_task_peers((*task)->spec(), sizes);
            // A task's timing is kept whole or not at all: cut short, it is timed again on resume.
            if (auto go = not_interrupted(); !go) return go;
            bt.seed = std::move(*seed);
            bt.best = std::move(best);
            fill_bench_sizes(bt, sizes, std::move(peers));
            record_rates(bt);
            if (auto saved = save(); !saved) return saved.error();
        }
        if (callbacks_.task_done) callbacks_.task_done(bt);
        return {};
    }

    // Every rate measured here in a bounded tensor class (the seed, the best-known kernel, each peer
    // whose output passed) goes into the device model's record, so that its ceiling only ratchets up
    // (eval/ceiling_ratchet.hpp); this bench keeps the ceilings it started with.
    void record_rates(const BenchTask& bt) {
        const std::optional<Datasheet> sheet = report_.ceilings ? report_.ceilings->datasheet : std::nullopt;
        auto record = [&](const SizeResult& shape, double seconds, const std::string& by) {
            const auto kind = parse_compute_class(shape.tensor_class);
            if (!kind || !is_bounded_tensor_class(*kind) || !(seconds > 0) || !(shape.tensor_flops > 0)) return;
            const double gflops = shape.tensor_flops / seconds * 1e-9;
            auto raised = record_class_rate(report_.device.name, {*kind, gflops, by, {}}, sheet);
            if (!raised) notice(fmt::format("the fastest-rate record could not be written: {}", raised.error().message));
            else if (*raised)
                notice(fmt::format("the {} ceiling's record for {} rose from {:.1f} to {:.1f} TFLOP/s ({}); evaluations "
                                   "from now on divide by the larger of it and the datasheet",
                                   shape.tensor_class, report_.device.name, (*raised)->before * 1e-3, (*raised)->after * 1e-3, by));
        };
        for (const auto& s : bt.sizes) {
            const auto& shape = s.best && s.best->timed ? s.best : s.seed;
            if (!shape || !shape->timed) continue;
            for (const auto* k : {&s.seed, &s.best})
                if (*k && (*k)->timed && (*k)->correct)
                    record(**k, (*k)->seconds, fmt::format("{} {} at {}", bt.task, k == &s.seed ? "seed" : "best", s.label));
            for (const auto& p : s.peers)
                if (p.right()) record(*shape, p.seconds, fmt::format("{} peer {} at {}", bt.task, p.name, s.label));
        }
    }

    std::map<std::string, std::vector<PeerTiming>> time_task_peers(const TaskSpec& spec, const std::vector<SizeSpec>& sizes) {
        std::map<std::string, std::vector<PeerTiming>> peers;
        if (!options_.peers || spec.peers.empty()) return peers;
        for (const auto& size : sizes) {
            if (interrupt_requested()) break;  // time_task's caller sees the signal next
            progress(fmt::format("{}: peers at {}", spec.name, size.label));
            auto device = callbacks_.peer_device();
            if (!device) {
                PeerTiming failed;
                failed.name = "peers";
                failed.error = device.error().message;
                peers[size.label].push_back(failed);
                continue;
            }
            if (!flusher_) flusher_ = std::make_unique<CacheFlusher>(**device);
            peers[size.label] = time_peers(**device, *flusher_, spec, size, options_.warmup, options_.repeat);
        }
        return peers;
    }
};

}  // namespace

Expected<BenchReport> run_bench(Evaluating& evaluator, const BenchOptions& options, const BenchCallbacks& callbacks) {
    return BenchRun(evaluator, options, callbacks).run();
}

}  // namespace kevo
