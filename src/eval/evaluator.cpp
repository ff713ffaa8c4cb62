// See evaluator.hpp. Deadline rules: the compile stage has its own limit; each run of N launches
// gets N x the launch limit (the larger of launch_timeout and a tenth of the request's timeout); the
// whole-candidate limit counts only time spent on the candidate's stages (not kevo's own reference
// computation, a first-use calibration or the wait for the device's lease).
#include "eval/evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "core/interrupt.hpp"
#include "eval/static_scan.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// kevo's own work, and the wait for the device's lease (another process timing), are not the candidate's.
bool is_candidate_stage(const std::string& stage) {
    return stage != "reference" && stage != "calibrate" && stage != "lease";
}
// Where a dying worker is kevo's fault: building inputs, computing or uploading the reference, calibrating.
bool is_kevo_stage(const std::string& stage) { return stage == "reference" || stage == "calibrate"; }
}  // namespace

double default_reference_timeout_s() {
    if (const char* v = std::getenv("KEVO_REFERENCE_TIMEOUT_S"); v && *v) {
        char* end = nullptr;
        const double s = std::strtod(v, &end);
        if (end != v && s > 0) return s;
    }
    return 7200;
}

Evaluator::Evaluator(EvaluatorOptions options)
    : options_(std::move(options)), client_(options_.backend, options_.device, options_.offline_arch, options_.worker_executable) {}

Expected<DeviceInfo> Evaluator::device() { return client_.ensure_started(); }

Expected<EvalResult> Evaluator::evaluate(const EvalRequest& request, bool compile_only) {
    auto task = make_task(request.task);
    if (!task) return task.error();
    if (!(*task)->spec().profiles.count(request.profile))
        return make_error(fmt::format("unknown profile '{}'; expected small, paper or large", request.profile));
    auto info = client_.ensure_started();
    if (!info) return info.error();

    const auto start = Clock::now();
    const Language language = default_language_of(options_.backend);
    const ScanResult scan = scan_source(request.source, language);
    const double scan_seconds = seconds_between(start, Clock::now());
    auto base_result = [&](Verdict v, std::string diagnostics) {
        EvalResult r;
        r.task = request.task;
        r.backend = info->backend;
        r.device = info->name;
        r.profile = request.profile;
        r.seed = request.seed;
        r.verdict = v;
        r.diagnostics = std::move(diagnostics);
        r.warnings = scan.warnings;
        r.stage_seconds.scan = scan_seconds;
        r.stage_seconds.total = seconds_between(start, Clock::now());
        return r;
    };
    if (!scan.accepted) return base_result(Verdict::rejected, "static scan: " + scan.reason);

    // Deadline bookkeeping, driven by the worker's stage events.
    std::string stage = "start", size, trial;
    auto stage_start = Clock::now();
    double candidate_seconds = 0;  // closed candidate stages
    double run_limit = request.timeout_s;
    const double launch_limit = std::max(options_.launch_timeout_s, request.timeout_s / 10);
    bool kevo_deadline = false;  // the worker was killed for kevo's own reference, not the candidate
    auto describe_stage = [&] {
        std::string where = stage;
        if (!size.empty()) where += fmt::format(" at size {}", size);
        if (!trial.empty()) where += fmt::format(" ({} trial)", trial);
        return where;
    };
    auto on_event = [&](const nlohmann::json* event) -> std::optional<std::string> {
        if (interrupt_requested()) return std::string("interrupted");
        const auto now = Clock::now();
        if (event && event->value("event", "") == "stage") {
            if (is_candidate_stage(stage)) candidate_seconds += seconds_between(stage_start, now);
            stage = event->value("stage", "");
            size = event->value("size", "");
            trial = event->value("trial", "");
            stage_start = now;
            const double launches = event->value("launches", 0.0);
            run_limit = launches > 0 ? launches * launch_limit : request.timeout_s;
            if (options_.progress && (stage == "compile" || stage == "timing" || stage == "calibrate" ||
                                      (stage == "run" && trial == "nominal")))
                options_.progress(describe_stage());
        } else if (event && event->value("event", "") == "progress" && options_.progress) {
            options_.progress(event->value("message", ""));
        }
        const double in_stage = seconds_between(stage_start, now);
        const double used = candidate_seconds + (is_candidate_stage(stage) ? in_stage : 0);
        if (stage == "reference" && in_stage > options_.reference_timeout_s) {
            kevo_deadline = true;
            return fmt::format("kevo's reference exceeded its {:.0f} s deadline ({})", options_.reference_timeout_s,
                               describe_stage());
        }
        if (stage == "compile" && in_stage > request.compile_timeout_s)
            return fmt::format("compilation exceeded its {:.0f} s deadline", request.compile_timeout_s);
        if ((stage == "run" || stage == "timed_run") && in_stage > run_limit)
            return fmt::format("a run exceeded its {:.0f} s deadline ({})", run_limit, describe_stage());
        if (used > request.timeout_s)
            return fmt::format("the candidate exceeded its {:.0f} s deadline during {}", request.timeout_s, describe_stage());
        return std::nullopt;
    };

    auto outcome = client_.exchange({{"op", compile_only ? "compile" : "eval"}, {"request", to_json(request)}}, {"result", "error", "fatal"}, on_event);
    // Ctrl-C or SIGTERM stopped the evaluation: that says nothing about the candidate.
    if (outcome.kind == ExchangeOutcome::Kind::killed && interrupt_requested())
        return make_error(fmt::format("interrupted by {}", interrupt_signal_name()));
    // kevo's own reference failing is an environment error (exit 2, a run stops resumable), never a verdict.
    if (outcome.kind == ExchangeOutcome::Kind::killed && kevo_deadline)
        return make_error(fmt::format("{}: an environment error, not a verdict on the candidate (the worker was killed; "
                                      "KEVO_REFERENCE_TIMEOUT_S sets the limit)", outcome.detail));
    if (outcome.kind == ExchangeOutcome::Kind::crashed && is_kevo_stage(stage))
        return make_error(fmt::format("the worker process died during kevo's own {}: {} (most likely out of host memory; "
                                      "an environment error, not a verdict on the candidate)",
                                      describe_stage(), outcome.detail));
    switch (outcome.kind) {
        case ExchangeOutcome::Kind::killed:
            return base_result(Verdict::timeout, outcome.detail + "; the worker was killed and will be restarted");
        case ExchangeOutcome::Kind::crashed:
            return base_result(Verdict::crash, fmt::format("the worker process died during {}: {}", describe_stage(), outcome.detail));
        case ExchangeOutcome::Kind::reply:
            break;
    }
    const std::string kind = outcome.reply.value("event", "");
    if (kind != "result") return make_error(outcome.reply.value("error", "the worker failed"));
    auto result = eval_result_from_json(outcome.reply.at("result"));
    if (!result) return result.error();
    result->stage_seconds.scan = scan_seconds;
    result->stage_seconds.total = seconds_between(start, Clock::now());
    result->warnings.insert(result->warnings.begin(), scan.warnings.begin(), scan.warnings.end());
    if (outcome.reply.value("poisoned", false)) {
        client_.kill_worker();  // it exits by itself; make sure, and start afresh next time
        result->warnings.push_back("the device context was left unusable; the worker was restarted");
    }
    return result;
}

std::function<std::optional<std::string>(const nlohmann::json*)> Evaluator::progress_only() const {
    return [this](const nlohmann::json* event) -> std::optional<std::string> {
        if (interrupt_requested()) return std::string("interrupted");
        if (event && event->value("event", "") == "progress" && options_.progress)
            options_.progress(event->value("message", ""));
        return std::nullopt;
    };
}

Expected<Calibration> Evaluator::ceilings() {
    auto info = client_.ensure_started();
    if (!info) return info.error();
    auto outcome = client_.exchange({{"op", "ceilings"}}, {"ceilings", "error", "fatal"},
                                    progress_only());
    if (outcome.kind != ExchangeOutcome::Kind::reply)
        return make_error(fmt::format("reading the ceilings failed: the worker {}", outcome.detail));
    if (outcome.reply.value("event", "") != "ceilings") return make_error(outcome.reply.value("error", "no ceilings"));
    return calibration_from_json(outcome.reply.at("calibration"));
}

Expected<Calibration> Evaluator::calibrate(bool quick) {
    auto info = client_.ensure_started();
    if (!info) return info.error();
    auto outcome = client_.exchange({{"op", "calibrate"}, {"quick", quick}}, {"calibration", "error", "fatal"},
                                    progress_only());
    if (outcome.kind != ExchangeOutcome::Kind::reply)
        return make_error(fmt::format("calibration failed: the worker {}", outcome.detail));
    if (outcome.reply.value("event", "") != "calibration") return make_error(outcome.reply.value("error", "calibration failed"));
    auto calibration = calibration_from_json(outcome.reply.at("calibration"));
    if (!calibration) return calibration.error();
    if (!outcome.reply.value("stored", false))
        return make_error("calibration measured but not cached: " + outcome.reply.value("store_error", std::string("?")));
    return calibration;
}

}  // namespace kevo
