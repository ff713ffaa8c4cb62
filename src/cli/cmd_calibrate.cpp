// `kevo calibrate`: measure the device's ceilings (bandwidth against working set, FP32) and cache them.
#include <fmt/format.h>

#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "eval/calibration_change.hpp"
#include "eval/evaluator_factory.hpp"

namespace kevo::cli {

namespace {

struct CalibrateOptions {
    DeviceOptions device;
    bool quick = false, json = false;
};

int run(const CalibrateOptions& o) {
    auto backend = resolve_backend_name(o.device.backend);
    if (!backend) return fail(backend.error().message);
    EvaluatorOptions options;
    options.backend = *backend;
    options.device = o.device.device;
    options.progress = [&](const std::string& line) { say(o.json, "  " + line); };
    auto evaluator = make_evaluator(options);
    auto info = evaluator->device();
    if (!info) return fail(info.error().message);
    say(o.json, fmt::format("calibrating {} device {}: {}{}", *backend, o.device.device, info->name, o.quick ? " (quick)" : ""));
    // The cached calibration this one replaces, if any: its figures are reported beside the new
    // ones, so that a calibration on a busy machine does not silently overwrite a quieter one.
    const auto replaced = load_cached_calibration(*info);
    auto c = evaluator->calibrate(o.quick);
    if (!c) return fail(c.error().message);
    std::optional<CalibrationChange> change;
    if (replaced) change = compare_calibrations(*replaced, *c);
    if (change)
        for (const auto& line : describe_calibration_change(*change)) say(true, line);
    if (o.json) {
        auto doc = to_json(*c);
        doc["replaced"] = change ? to_json(*change) : nlohmann::json(nullptr);
        print_json(doc);
        return kExitOk;
    }
    std::string text = fmt::format("\n{:>12}  {:>12}  {:>12}\n", "working set", "copy GB/s", "triad GB/s");
    for (const auto& p : c->curve)
        text += fmt::format("{:>12}  {:>12.1f}  {:>12.1f}\n", format_bytes(p.working_set_bytes), p.copy_gbs, p.triad_gbs);
    text += fmt::format("\nstreaming bandwidth (static ceiling): {:.1f} GB/s\nFP32 (FMA chains): {:.1f} GFLOP/s\n",
                        c->bandwidth_gbs, c->fp32_gflops);
    if (c->datasheet)
        text += fmt::format("datasheet ({}): {:.0f} GB/s ({:.0f}% measured), {:.0f} GFLOP/s ({:.0f}% measured)\n",
                            c->datasheet->name, c->datasheet->bandwidth_gbs, 100 * c->bandwidth_gbs / c->datasheet->bandwidth_gbs,
                            c->datasheet->fp32_gflops, 100 * c->fp32_gflops / c->datasheet->fp32_gflops);
    else
        text += "datasheet: no entry for this device\n";
    for (const auto& line : describe_tensor_ceilings(*c)) text += line + "\n";
    text += fmt::format("cached as {}\n", c->device_key);
    say(false, text);
    return kExitOk;
}

}  // namespace

void setup_calibrate(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("calibrate", "measure and cache the device's ceilings");
    auto o = std::make_shared<CalibrateOptions>();
    add_device_options(*cmd, o->device);
    cmd->add_flag("--quick", o->quick, "fewer sizes and repeats (what `kevo eval` does on first use)");
    add_json_option(*cmd, o->json);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
