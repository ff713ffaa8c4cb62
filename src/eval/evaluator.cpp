// See evaluator.hpp. The deadlines over the worker's stages are eval/stage_clock's.
#include "eval/evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/interrupt.hpp"
#include "eval/compile_stage.hpp"
#include "eval/stage_clock.hpp"
#include "eval/static_scan.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

std::string unknown_profile_text(const TaskSpec& spec, const std::string& profile) {
    std::vector<std::string> names;
    for (const auto& p : kProfileNames)
        if (spec.profiles.count(p)) names.push_back(p);
    const bool trace = profile == kTraceProfile;
    return fmt::format("task {} has no profile '{}'; its profiles are {}{}", spec.name, profile, fmt::join(names, ", "),
                       trace ? " (trace is the ML pack's: production shapes from tasks/<task>/trace.toml)" : "");
}

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// A worker that broke the protocol says nothing about the candidate.
Error protocol_error(const std::string& detail) {
    return make_error(fmt::format("worker protocol error: {} (the worker was killed; an environment error, not a "
                                  "verdict on the candidate)", detail));
}
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
        return make_error(unknown_profile_text((*task)->spec(), request.profile));
    auto info = client_.ensure_started();
    if (!info) return info.error();

    const auto start = Clock::now();
    auto language_or = request_language(request, options_.backend);
    if (!language_or) return language_or.error();
    const Language language = *language_or;
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
    StageClock clock(StageLimits{request.timeout_s, request.compile_timeout_s,
                                 std::max(options_.launch_timeout_s, request.timeout_s / 10), options_.reference_timeout_s},
                     Clock::now());
    bool kevo_deadline = false;  // the worker was killed for kevo's own reference, not the candidate
    auto describe_stage = [&] { return clock.current().describe(); };
    auto on_event = [&](const WorkerEvent* event) -> std::optional<std::string> {
        if (interrupt_requested()) return std::string("interrupted");
        const auto now = Clock::now();
        if (event && event->stage) {
            clock.enter(*event->stage, now);
            if (options_.progress && worth_announcing(*event->stage)) options_.progress(describe_stage());
        } else if (event && event->kind == Event::progress && options_.progress) {
            options_.progress(event->body.value("message", ""));
        }
        auto overrun = clock.check(now);
        if (!overrun) return std::nullopt;
        kevo_deadline = overrun->kevo_fault;
        return overrun->reason;
    };

    nlohmann::json message = op_message(compile_only ? Op::compile : Op::eval);
    message["request"] = to_json(request);
    auto outcome = client_.exchange(message, {Event::result, Event::error, Event::fatal}, on_event);
    // Ctrl-C or SIGTERM stopped the evaluation: that says nothing about the candidate.
    if (outcome.kind == ExchangeOutcome::Kind::killed && interrupt_requested())
        return make_error(fmt::format("interrupted by {}", interrupt_signal_name()));
    // kevo's own reference failing is an environment error (exit 2, a run stops resumable), never a verdict.
    if (outcome.kind == ExchangeOutcome::Kind::killed && kevo_deadline)
        return make_error(fmt::format("{}: an environment error, not a verdict on the candidate (the worker was killed; "
                                      "KEVO_REFERENCE_TIMEOUT_S sets the limit)", outcome.detail));
    if (outcome.kind == ExchangeOutcome::Kind::crashed && is_kevo_stage(clock.current().stage))
        return make_error(fmt::format("the worker process died during kevo's own {}: {} (most likely out of host memory; "
                                      "an environment error, not a verdict on the candidate)",
                                      describe_stage(), outcome.detail));
    switch (outcome.kind) {
        case ExchangeOutcome::Kind::killed:
            return base_result(Verdict::timeout, outcome.detail + "; the worker was killed and will be restarted");
        case ExchangeOutcome::Kind::crashed:
            return base_result(Verdict::crash, fmt::format("the worker process died during {}: {}", describe_stage(), outcome.detail));
        case ExchangeOutcome::Kind::protocol_error:
            return protocol_error(outcome.detail);
        case ExchangeOutcome::Kind::reply:
            break;
    }
    if (outcome.reply_kind != Event::result) return make_error(outcome.reply.value("error", "the worker failed"));
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

std::function<std::optional<std::string>(const WorkerEvent*)> Evaluator::progress_only() const {
    return [this](const WorkerEvent* event) -> std::optional<std::string> {
        if (interrupt_requested()) return std::string("interrupted");
        if (event && event->kind == Event::progress && options_.progress)
            options_.progress(event->body.value("message", ""));
        return std::nullopt;
    };
}

Expected<Calibration> Evaluator::ceilings() {
    auto info = client_.ensure_started();
    if (!info) return info.error();
    auto outcome = client_.exchange(op_message(Op::ceilings), {Event::ceilings, Event::error, Event::fatal}, progress_only());
    if (outcome.kind == ExchangeOutcome::Kind::protocol_error) return protocol_error(outcome.detail);
    if (outcome.kind != ExchangeOutcome::Kind::reply)
        return make_error(fmt::format("reading the ceilings failed: the worker {}", outcome.detail));
    if (outcome.reply_kind != Event::ceilings) return make_error(outcome.reply.value("error", "no ceilings"));
    return calibration_from_json(outcome.reply.at("calibration"));
}

Expected<Calibration> Evaluator::calibrate(bool quick) {
    auto info = client_.ensure_started();
    if (!info) return info.error();
    nlohmann::json message = op_message(Op::calibrate);
    message["quick"] = quick;
    auto outcome = client_.exchange(message, {Event::calibration, Event::error, Event::fatal}, progress_only());
    if (outcome.kind == ExchangeOutcome::Kind::protocol_error) return protocol_error(outcome.detail);
    if (outcome.kind != ExchangeOutcome::Kind::reply)
        return make_error(fmt::format("calibration failed: the worker {}", outcome.detail));
    if (outcome.reply_kind != Event::calibration) return make_error(outcome.reply.value("error", "calibration failed"));
    auto calibration = calibration_from_json(outcome.reply.at("calibration"));
    if (!calibration) return calibration.error();
    if (!outcome.reply.value("stored", false))
        return make_error("calibration measured but not cached: " + outcome.reply.value("store_error", std::string("?")));
    return calibration;
}

}  // namespace kevo
