// Test helper: an Evaluating whose results are scripted, not measured. A candidate says what its
// evaluation finds in a marker line of its source,
//     #define KEVO_SCRIPT speed=1.5 heldout_speed=0.8 verdict=ok heldout=incorrect cv=0.01
// (every key optional; a line of code, not a comment, so that two scripts of one kernel are two
// kernels to the duplicate check): its time at every size is the seed's divided by `speed` (the
// held-out sizes' by `heldout_speed`, default `speed`), its verdict `verdict`, and `heldout` the
// verdict at the held-out sizes alone. A source without a marker is timed as `speed_rule` says: by
// its knob values (the tune proposer changes those, not the source), the seed's own defaults at the
// seed's speed. The sizes are the task's own for the profile; the seed reaches half of the bandwidth
// ceiling at each; fractions divide by the ceilings the request pins, else by the evaluator's
// calibration, which a test may replace (a recalibration). Everything is deterministic: the tests of
// promotion, strategies, resume, the gate and the reports that run on it check their rules, not the
// noise of a machine. An evaluation past `fail_after` is an environment error, as a worker that died
// would be: the run stops there, resumable, as after a kill. The static scan is the real one (a
// source it refuses is `rejected`, as by the Evaluator). The device is an OpenCL CPU unless
// `backend` says "cuda"; a candidate in a language with its own compiler (Triton) is compiled for
// real, by the pinned compiler for sm_90, and what it refuses or cannot compile is that verdict:
// only the launch and the timing are scripted, the part that needs a GPU.
#pragma once

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/stats.hpp"
#include "eval/compile_stage.hpp"
#include "eval/evaluating.hpp"
#include "eval/static_scan.hpp"
#include "task/registry.hpp"

namespace kevo::test {

// What a marker line scripts.
struct Script {
    Verdict verdict = Verdict::ok;
    Verdict heldout = Verdict::ok;
    double speed = 1.0;
    std::optional<double> heldout_speed;
    double cv = 0.01;
};

inline constexpr const char* kScriptMarker = "#define KEVO_SCRIPT";

// The script in `source`'s marker line; nullopt without one. A bad key or value is a broken test.
inline std::optional<Script> script_of(const std::string& source) {
    const auto at = source.find(kScriptMarker);
    if (at == std::string::npos) return std::nullopt;
    const auto from = at + std::string(kScriptMarker).size(), end = source.find('\n', from);
    std::istringstream words(source.substr(from, end == std::string::npos ? std::string::npos : end - from));
    Script script;
    for (std::string word; words >> word;) {
        const auto eq = word.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("scripted marker word without '=': " + word);
        const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
        if (key == "speed") script.speed = std::stod(value);
        else if (key == "heldout_speed") script.heldout_speed = std::stod(value);
        else if (key == "cv") script.cv = std::stod(value);
        else if (key == "verdict" || key == "heldout") {
            auto verdict = parse_verdict(value);
            if (!verdict) throw std::invalid_argument("scripted marker: " + verdict.error().message);
            (key == "verdict" ? script.verdict : script.heldout) = *verdict;
        } else {
            throw std::invalid_argument("scripted marker: unknown key " + key);
        }
    }
    return script;
}

// `source` with a marker line scripting it (prepended).
inline std::string scripted(const std::string& source, const std::string& script) {
    return fmt::format("{} {}\n{}", kScriptMarker, script, source);
}

// A calibration of the scripted device: `bandwidth_gbs`, measured at `measured_at`.
inline Calibration scripted_calibration(double bandwidth_gbs = 100, const std::string& measured_at = "2026-01-01T00:00:00Z") {
    Calibration c;
    c.device_key = "opencl/scripted device/1";
    c.device_name = "scripted device";
    c.source = "measured";
    c.bandwidth_gbs = bandwidth_gbs;
    c.fp32_gflops = 10 * bandwidth_gbs;
    c.measured_at = measured_at;
    return c;
}

// The tuner's points differ in knob values only: each has its own speed (the seed's defaults 1, the
// others from 0.85 to 1.3), the same in every run.
inline double speed_of_knobs(const EvalRequest& request) {
    if (request.defines.empty()) return 1.0;
    std::string key;
    for (const auto& [name, value] : request.defines) key += name + "=" + value + ";";
    return 0.85 + 0.075 * static_cast<double>(std::hash<std::string>{}(key) % 7);
}

class ScriptedEvaluator final : public Evaluating {
public:
    // The seed reaches this rate at every size (half of the default ceiling).
    static constexpr double kSeedGbs = 50;

    // For a source without a marker: its speed-up over the seed, from the request (its knob values).
    std::function<double(const EvalRequest&)> speed_rule = speed_of_knobs;
    // Evaluations beyond this many fail as an environment error; < 0: never.
    int fail_after = -1;
    // How long each evaluation takes (a test that kills a process mid-run needs it to last).
    std::chrono::milliseconds delay{0};
    Calibration calibration = scripted_calibration();
    std::vector<EvalRequest> requests;  // every evaluation asked for, in order
    std::string backend = "opencl";     // the device's backend: "opencl" (a CPU) or "cuda" (an sm_90 GPU)

    // The device of the pool this evaluator is on, and one that faults (< 0: none): its first
    // evaluation kills its worker and leaves `fault_file` behind, after which the device cannot be
    // opened, as after a driver fault (every process that opens it sees the file).
    int device_index = 0, faulty_device = -1;
    std::string fault_file;

    bool device_lost() const { return device_index == faulty_device && std::filesystem::exists(fault_file); }

    Expected<DeviceInfo> device() override {
        if (device_lost()) return make_error(fmt::format("scripted device {} is lost", device_index));
        DeviceInfo info;
        info.index = device_index;
        info.backend = backend;
        info.name = calibration.device_name;
        info.vendor = "kevo tests";
        info.driver = "1";
        info.is_cpu = backend == "opencl";
        info.compute_units = 1;
        if (backend == "cuda") info.arch = "sm_90";
        return info;
    }

    Expected<EvalResult> evaluate(const EvalRequest& request, bool compile_only = false) override {
        if (device_index == faulty_device) {
            std::ofstream(fault_file) << "lost\n";
            return make_error(fmt::format("scripted device {} faulted: the worker died", device_index));
        }
        if (fail_after >= 0 && static_cast<int>(requests.size()) >= fail_after)
            return make_error(fmt::format("scripted worker died after {} evaluations", fail_after));
        requests.push_back(request);
        if (delay.count() > 0) std::this_thread::sleep_for(delay);
        auto task = make_task(request.task);
        if (!task) return task.error();
        auto pinned = request.ceilings.is_null() ? Expected<Calibration>(calibration) : calibration_from_json(request.ceilings);
        if (!pinned) return pinned.error();
        auto language = request_language(request, backend);
        if (!language) return language.error();
        // The static scan is the real one: what it refuses never reaches an evaluation.
        const ScanResult scan = (*language)->c_family ? scan_source(request.source, *language) : ScanResult{};
        const auto marked = script_of(request.source);
        Script script = marked.value_or(Script{});
        if (!marked && speed_rule) script.speed = speed_rule(request);

        EvalResult r;
        r.task = request.task;
        r.backend = backend;
        r.device = calibration.device_name;
        r.profile = request.profile;
        r.defines = request.defines;
        r.seed = request.seed;
        r.ceilings = ceilings_used(*pinned);
        r.ceiling_source = r.ceilings.source;
        r.warnings = scan.warnings;
        if (!scan.accepted) {
            r.verdict = Verdict::rejected;
            r.diagnostics = "static scan: " + scan.reason;
            return r;
        }
        if ((*language)->compile) {
            auto stage = run_compile_stage((*task)->spec(), request, *language, "sm_90", nullptr);
            if (!stage) return stage.error();
            if (stage->verdict) {
                r.verdict = *stage->verdict;
                r.diagnostics = stage->diagnostics;
                return r;
            }
            r.defines = stage->knobs;
        }
        if (compile_only) {
            r.verdict = script.verdict == Verdict::compile_error ? Verdict::compile_error : Verdict::ok;
            return r;
        }
        r.verdict = script.verdict;
        if (r.verdict == Verdict::compile_error || r.verdict == Verdict::rejected) return r;
        size_result_all(r, (*task)->spec().profiles.at(request.profile), request, script, pinned->bandwidth_gbs);
        return r;
    }

    Expected<Calibration> calibrate(bool) override { return calibration; }
    Expected<Calibration> ceilings() override { return calibration; }
    int worker_restarts() const override { return 0; }

private:
    static bool selected(const SizeSpec& size, SizeSelection selection) {
        return selection == SizeSelection::all || size.heldout == (selection == SizeSelection::heldout);
    }

    // Every selected size: correct and timed, or failing with the script's verdict; then the score.
    static void size_result_all(EvalResult& r, const std::vector<SizeSpec>& sizes, const EvalRequest& request,
                                const Script& script, double ceiling_gbs) {
        std::vector<double> in_fractions, heldout_fractions;
        for (size_t i = 0; i < sizes.size(); ++i) {
            if (!selected(sizes[i], request.sizes)) continue;
            const Verdict verdict = sizes[i].heldout && script.heldout != Verdict::ok ? script.heldout : script.verdict;
            SizeResult s;
            s.label = sizes[i].label;
            s.heldout = sizes[i].heldout;
            s.correct = verdict == Verdict::ok;
            if (!s.correct) {
                r.verdict = verdict;
                s.diagnostics = fmt::format("scripted {}", verdict_name(verdict));
                r.sizes.push_back(s);
                continue;
            }
            const double speed = sizes[i].heldout ? script.heldout_speed.value_or(script.speed) : script.speed;
            s.work = 1e9 * static_cast<double>(i + 1);
            s.unit = "GB/s";
            if (!request.check_only) {
                s.timed = true;
                s.seconds = s.work / (kSeedGbs * 1e9) / speed;
                s.seconds_min = s.seconds * (1 - script.cv);
                s.seconds_max = s.seconds * (1 + script.cv);
                s.cv = script.cv;
                s.samples = request.repeat;
                s.achieved = s.work / s.seconds / 1e9;
                s.ceiling = s.ceiling_static = s.ceiling_workload = ceiling_gbs;
                s.fraction = s.achieved / ceiling_gbs;
                (s.heldout ? heldout_fractions : in_fractions).push_back(s.fraction);
            }
            r.sizes.push_back(s);
        }
        if (r.verdict != Verdict::ok || request.check_only) return;
        if (!in_fractions.empty()) r.score = geometric_mean(in_fractions);
        if (!heldout_fractions.empty()) r.heldout_fraction = geometric_mean(heldout_fractions);
    }
};

}  // namespace kevo::test
