// What an evaluation is asked to do (EvalRequest) and what it found (EvalResult), with their JSON
// forms: the same JSON crosses the worker pipe, goes into the store and is printed by `kevo eval`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"
#include "core/json.hpp"

namespace kevo {

// Candidate outcomes are data (KTT's result statuses): never exceptions, never exit codes of kevo.
enum class Verdict { ok, compile_error, rejected, incorrect, runtime_error, timeout, crash };
const char* verdict_name(Verdict v);
Expected<Verdict> parse_verdict(const std::string& name);

enum class SizeSelection { in, heldout, all };
Expected<SizeSelection> parse_size_selection(const std::string& name);

enum class RooflineMode { static_peak, workload };
Expected<RooflineMode> parse_roofline_mode(const std::string& name);

// Which term of a size's speed-of-light time binds, on the multi-class roofline (eval/roofline.hpp);
// none for a size scored by its task's single Bound (the scientific tasks).
enum class Limiter { none, memory, cuda_cores, tensor_cores };
const char* limiter_name(Limiter limiter);

struct EvalRequest {
    std::string task;
    std::string profile = "small";
    std::string source;                         // the candidate's kernel source
    std::string source_name;                    // its path, named in compiler messages (empty: "candidate.<cu|cl>")
    std::string language;                       // a registered language's name; empty: the backend's default
    std::map<std::string, std::string> defines;  // tune-knob values overriding the defaults
    SizeSelection sizes = SizeSelection::in;
    int warmup = 3;
    int repeat = 10;                // timed runs per size, and per extra round when the timings are noisy
    int max_repeat = 40;            // timed runs per size at most, extra rounds included
    double noise_cv = 0.10;         // a size whose cv stays above this after the extra rounds is noisy
    double timeout_s = 60;          // whole candidate
    double compile_timeout_s = 60;  // compilation alone
    RooflineMode roofline = RooflineMode::static_peak;
    uint64_t seed = 0;              // correctness inputs derive from this
    bool check_only = false;        // skip timing
    bool device_reference = false;  // every size's reference from the task's seed on the device
    // The ceilings to score against (a Calibration's JSON, eval/calibration.hpp), pinned by the run or
    // study that asks; null: the worker's own (the cache, measured on first use).
    nlohmann::json ceilings;
};

struct CompileMessage {
    int line = 0, column = 0;
    std::string severity;  // "error" | "warning"
    std::string message;
};

struct KernelResources {
    std::string kernel;
    int registers = -1;
    int64_t shared_bytes = -1;
    int64_t local_bytes = -1;
    unsigned max_threads = 0;
    std::vector<uint64_t> block;      // in force
    std::vector<uint64_t> per_thread;
    uint64_t dynamic_shared_bytes = 0;  // smem= in force (CUDA)
};

// What the check found in one correctness trial of one size.
struct TrialCheck {
    std::string trial;              // "nominal" | "outlier"
    std::string kind;               // the check's kind: "max_abs", "nan", "bit_exact", ...
    double error = 0, tolerance = 0;
    int64_t worst_index = -1;
    bool pass = false;
};

struct SizeResult {
    std::string label;
    bool heldout = false;
    bool correct = false;
    // The binding trial's check (the one nearest to, or past, its tolerance); every trial's is in `trials`.
    std::string error_kind;
    double error = 0, tolerance = 0;
    int64_t worst_index = -1;
    std::vector<TrialCheck> trials;
    std::string diagnostics;        // per-size detail when it failed
    bool timed = false;
    double seconds = 0, seconds_min = 0, seconds_max = 0, cv = 0;
    int samples = 0;                // timed runs behind the median
    bool noisy = false;             // cv stayed above the noise threshold after the extra repeats
    double achieved = 0;            // GB/s or GFLOP/s
    std::string unit;
    double ceiling = 0;             // the one in force (static or workload)
    double ceiling_static = 0, ceiling_workload = 0;
    double fraction = 0;
    double work = 0;                // bytes or FLOPs of one run
    bool implausible = false;       // fraction > 1.05 even after re-measuring
    // Multi-class roofline only: the speed-of-light time in force (fraction = sol_seconds / seconds)
    // and the term that set it.
    double sol_seconds = 0;
    Limiter limiter = Limiter::none;
    // The datasheet basis (Atrex-Bench's): the same time against the vendor's figures (bandwidth, FP32,
    // dense tensor peaks) in place of the ceilings in force; ceiling_datasheet is in `unit`, so that
    // fraction_datasheet = achieved / ceiling_datasheet. 0 when the device is not in the datasheet table.
    double fraction_datasheet = 0, ceiling_datasheet = 0;
    // A multi-class size whose tensor work is all of one class: that class ("fp8") and its FLOPs per
    // run, so that any kernel's time gives a rate the device reached in it (eval/ceiling_ratchet.hpp).
    std::string tensor_class;
    double tensor_flops = 0;
    // The size's weight in the profile's score (SizeSpec::weight: a trace shape's call count).
    double weight = 1;
    // Launch-bound sizes of the trace profile are timed as `replays` copies of the case run back to
    // back as one submission (a CUDA graph; OpenCL: every enqueue, one wait), `seconds` per copy;
    // 0: timed one run at a time.
    int replays = 0;
};

// Records a trial's check on the size and makes the binding trial's figures the size's own.
void add_trial_check(SizeResult& size, TrialCheck check);

struct TensorCeilingUsed {
    std::string kind;    // "bf16" | "fp8" | "int8"
    std::string source;  // "measured" | "datasheet" | "absent"
    double gflops = 0;   // dense; 0 when absent
};

// The ceilings a score was computed against: where they came from and when, so that every score
// can be traced to a measurement (or to the datasheet, said so).
struct CeilingsUsed {
    std::string source;             // "measured" | "datasheet" | "none"
    double bandwidth_gbs = 0;       // static bandwidth ceiling
    double fp32_gflops = 0;         // static FP32 ceiling
    std::string measured_at;        // ISO-8601 UTC; empty for the datasheet
    bool stable = true;             // the calibration's repeated passes agreed
    double spread = 0;              // their relative disagreement
    std::string datasheet;          // "NVIDIA H200: 4800 GB/s, 66900 GFLOP/s", when the table knows the device
    std::vector<TensorCeilingUsed> tensor;  // the tensor-core classes: measured, datasheet or absent
    // The datasheet basis's ceilings (the vendor's figures; 0 / empty when the table lacks the device).
    double datasheet_bandwidth_gbs = 0, datasheet_fp32_gflops = 0;
    std::vector<TensorCeilingUsed> datasheet_tensor;
};

struct StageTimes {
    double scan = 0, compile = 0, correctness = 0, timing = 0, total = 0;
};

struct EvalResult {
    std::string task, backend, device, profile;
    Verdict verdict = Verdict::crash;
    std::string diagnostics;
    std::optional<double> score;          // geometric mean of in-distribution fractions
    std::optional<double> heldout_fraction;
    std::vector<SizeResult> sizes;
    std::vector<KernelResources> resources;
    std::vector<CompileMessage> compile_messages;
    std::vector<std::string> warnings;    // static-scan flags and the like
    std::map<std::string, std::string> defines;  // knob values in force
    std::string ceiling_source;           // "measured" | "datasheet" | "none" (= ceilings.source)
    CeilingsUsed ceilings;
    RooflineMode roofline = RooflineMode::static_peak;  // which ceiling the sizes' `ceiling` is
    StageTimes stage_seconds;
    uint64_t seed = 0;
};

void to_json(nlohmann::json& j, Verdict v);
void from_json(const nlohmann::json& j, Verdict& v);
void to_json(nlohmann::json& j, SizeSelection v);
void from_json(const nlohmann::json& j, SizeSelection& v);
void to_json(nlohmann::json& j, RooflineMode v);
void from_json(const nlohmann::json& j, RooflineMode& v);
void to_json(nlohmann::json& j, Limiter v);
void from_json(const nlohmann::json& j, Limiter& v);
const char* roofline_mode_name(RooflineMode mode);

KEVO_JSON_FIELDS(EvalRequest, task, profile, source, source_name, language, defines, sizes, warmup, repeat, max_repeat, noise_cv, timeout_s,
                 compile_timeout_s, roofline, seed, check_only, device_reference, ceilings)
KEVO_JSON_FIELDS(CompileMessage, line, column, severity, message)
KEVO_JSON_FIELDS(KernelResources, kernel, registers, shared_bytes, local_bytes, max_threads, block, per_thread,
                 dynamic_shared_bytes)
KEVO_JSON_FIELDS(TrialCheck, trial, kind, error, tolerance, worst_index, pass)
KEVO_JSON_FIELDS(SizeResult, label, heldout, correct, error_kind, error, tolerance, worst_index, trials, diagnostics,
                 timed, seconds, seconds_min, seconds_max, cv, samples, noisy, achieved, unit, ceiling, ceiling_static,
                 ceiling_workload, fraction, work, implausible, sol_seconds, limiter, fraction_datasheet, ceiling_datasheet,
                 tensor_class, tensor_flops, weight, replays)
KEVO_JSON_FIELDS(StageTimes, scan, compile, correctness, timing, total)
KEVO_JSON_FIELDS(TensorCeilingUsed, kind, source, gflops)
KEVO_JSON_FIELDS(CeilingsUsed, source, bandwidth_gbs, fp32_gflops, measured_at, stable, spread, datasheet, tensor,
                 datasheet_bandwidth_gbs, datasheet_fp32_gflops, datasheet_tensor)
KEVO_JSON_FIELDS(EvalResult, task, backend, device, profile, verdict, diagnostics, score, heldout_fraction, sizes,
                 resources, compile_messages, warnings, defines, ceiling_source, ceilings, roofline, stage_seconds, seed)

nlohmann::json to_json(const EvalRequest& r);
Expected<EvalRequest> eval_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const EvalResult& r);
Expected<EvalResult> eval_result_from_json(const nlohmann::json& j);

}  // namespace kevo
