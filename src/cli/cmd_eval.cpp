// `kevo eval TASK FILE`: run one candidate through the evaluation cascade (CLI.md "kevo eval").
#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/interrupt.hpp"
#include "core/files.hpp"
#include "core/rng.hpp"
#include "eval/evaluator_factory.hpp"
#include "report/eval_text.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

// The evaluation's defaults live in EvalRequest (eval/eval_types.hpp); the CLI takes them from there.
const EvalRequest kEvalDefaults{};

struct EvalOptions {
    DeviceOptions device;
    std::string task, file, profile, sizes = "in", roofline = "static", arch, reference = "auto";
    int warmup = kEvalDefaults.warmup, repeat = kEvalDefaults.repeat, max_repeat = kEvalDefaults.max_repeat;
    double timeout = kEvalDefaults.timeout_s, compile_timeout = kEvalDefaults.compile_timeout_s,
           noise_cv = kEvalDefaults.noise_cv;
    std::vector<std::string> defines;
    uint64_t seed = 0;
    bool seed_given = false, json = false, check_only = false, compile_only = false;
};

// Correctness inputs come from one of a few fixed seeds, picked at random per evaluation: fresh
// enough that a candidate cannot know them, few enough that cached references get reused.
uint64_t pick_seed() {
    constexpr uint64_t kPool = 8;
    return rng::splitmix64(0x6B65766Full + rng::fresh_seed() % kPool) & 0xFFFFFFFFull;
}

int run(EvalOptions& o) {
    auto task = make_task(o.task);
    if (!task) return fail(task.error().message);
    auto source = read_text_file(o.file);
    if (!source) return fail(source.error().message);
    auto sizes = parse_size_selection(o.sizes);
    if (!sizes) return fail(sizes.error().message);
    auto roofline = parse_roofline_mode(o.roofline);
    if (!roofline) return fail(roofline.error().message);
    auto backend_name = backend_for_file(o.device.backend, o.file);
    if (!backend_name) return fail(backend_name.error().message);
    if (!o.arch.empty() && !std::regex_match(o.arch, std::regex(R"((sm|compute)_[0-9]{2,3}[af]?)")))
        return fail(fmt::format("--arch '{}': expected a CUDA architecture such as sm_90, sm_90a or sm_80", o.arch));

    EvalRequest request;
    request.task = o.task;
    request.source = *source;
    request.source_name = o.file;
    request.language = language_of_file(o.file);
    request.sizes = *sizes;
    request.roofline = *roofline;
    request.warmup = o.warmup;
    request.repeat = o.repeat;
    request.max_repeat = std::max(o.max_repeat, o.repeat);
    request.noise_cv = o.noise_cv;
    request.timeout_s = o.timeout;
    request.compile_timeout_s = o.compile_timeout;
    request.check_only = o.check_only;
    request.device_reference = o.reference == "device";
    request.seed = o.seed_given ? o.seed : pick_seed();
    for (const auto& d : o.defines) {
        const auto eq = d.find('=');
        if (eq == std::string::npos || eq == 0) return fail(fmt::format("--define '{}': expected NAME=VALUE", d));
        request.defines[d.substr(0, eq)] = d.substr(eq + 1);
    }

    EvaluatorOptions options;
    options.backend = *backend_name;
    options.device = o.device.device;
    options.progress = [&](const std::string& line) { say(true, "  " + line); };
    auto backend = make_backend(*backend_name);
    if (!o.arch.empty() && !o.compile_only)
        return fail(fmt::format("--arch {}: only --compile-only takes a target; an evaluation compiles for its device's "
                                "own architecture", o.arch));
    if (o.compile_only && (!o.arch.empty() || backend->probe().empty())) {
        // No device, or a target named: compile with the offline compiler where the backend has one
        // (NVRTC), so that --arch means the same with and without a GPU.
        options.offline_arch = o.arch.empty() ? backend->default_offline_arch() : o.arch;
        if (options.offline_arch.empty())
            return fail(fmt::format("--compile-only: backend {} has no device and cannot compile offline ({})", *backend_name,
                                    backend->unavailable_reason()));
    }
    auto evaluator = make_evaluator(options);
    auto info = evaluator->device();
    if (!info) return fail(info.error().message);
    request.profile = resolve_profile(o.profile, *info);
    // On stderr in both modes: with --json the progress below it would otherwise have no header.
    if (o.compile_only)
        say(true, fmt::format("compiling {} for {} on {} ({})", o.file, o.task, info->name, *backend_name));
    else
        say(true, fmt::format("evaluating {} for {} on {} ({}), profile {}", o.file, o.task, info->name, *backend_name,
                              request.profile));
    install_interrupt_handlers();
    auto result = evaluator->evaluate(request, o.compile_only);
    if (!result) return fail_unless_interrupted(result.error().message);
    if (o.json) {
        auto doc = to_json(*result);
        doc["file"] = o.file;
        doc["compile_only"] = o.compile_only;
        print_json(doc);
    } else {
        say(false, render_eval_text(*result));
    }
    return result->verdict == Verdict::ok ? kExitOk : kExitRejected;
}

}  // namespace

void setup_eval(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("eval", "evaluate one candidate kernel: compile, check, time, score");
    auto o = std::make_shared<EvalOptions>();
    cmd->add_option("TASK", o->task, "task name (see `kevo tasks`)")->required();
    cmd->add_option("FILE", o->file, "candidate kernel source (.cu for cuda, .cl for opencl)")->required();
    add_device_options(*cmd, o->device);
    add_profile_option(*cmd, o->profile);
    add_json_option(*cmd, o->json);
    cmd->add_option("--sizes", o->sizes, "in (default), heldout or all")->check(CLI::IsMember({"in", "heldout", "all"}));
    cmd->add_option("--warmup", o->warmup, "untimed runs before timing")->capture_default_str()->check(whole_range(0, 1000));
    cmd->add_option("--repeat", o->repeat, "timed runs per size")->capture_default_str()->check(whole_range(1, 10000));
    add_noise_options(*cmd, o->max_repeat, o->noise_cv);
    cmd->add_option("--timeout", o->timeout, "whole-candidate deadline in seconds")
        ->capture_default_str()
        ->check(finite_range(0.1, 86400.0));
    cmd->add_option("--compile-timeout", o->compile_timeout, "compilation deadline in seconds")
        ->capture_default_str()
        ->check(finite_range(0.1, 86400.0));
    cmd->add_option("--roofline", o->roofline, "static (device peak, default) or workload (bandwidth at the working set)")
        ->check(CLI::IsMember({"static", "workload"}));
    cmd->add_option("--define,-D", o->defines, "set a tune knob: NAME=VALUE (one per -D; repeatable)")->allow_extra_args(false);
    auto* seed = cmd->add_option("--seed", o->seed, "seed of the correctness inputs (default: one of a fixed pool, at random)");
    cmd->add_option("--reference", o->reference,
                    "auto (the task's choice per size, default) or device (the task's seed run on this device is the "
                    "reference at every size)")
        ->check(CLI::IsMember({"auto", "device"}));
    cmd->add_flag("--check-only", o->check_only, "correctness only, no timing");
    cmd->add_flag("--compile-only", o->compile_only, "static scan and compilation only (CUDA works without a GPU)");
    cmd->add_option("--arch", o->arch, "target for --compile-only (default: the device's own, or sm_90 without a device)");
    cmd->callback([&exit_code, o, seed] {
        o->seed_given = seed->count() > 0;
        exit_code = run(*o);
    });
}

}  // namespace kevo::cli
