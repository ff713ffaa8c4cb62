// What an evaluation is asked to do (EvalRequest) and what it found (EvalResult), with their JSON
// forms: the same JSON crosses the worker pipe, goes into the store and is printed by `kevo eval`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"

namespace kevo {

// Candidate outcomes are data (KTT's result statuses): never exceptions, never exit codes of kevo.
enum class Verdict { ok, compile_error, rejected, incorrect, runtime_error, timeout, crash };
const char* verdict_name(Verdict v);
Expected<Verdict> parse_verdict(const std::string& name);

enum class SizeSelection { in, heldout, all };
Expected<SizeSelection> parse_size_selection(const std::string& name);

enum class RooflineMode { static_peak, workload };
Expected<RooflineMode> parse_roofline_mode(const std::string& name);

struct EvalRequest {
    std::string task;
    std::string profile = "small";
    std::string source;                         // the candidate's kernel source
    std::map<std::string, std::string> defines;  // tune-knob values overriding the defaults
    SizeSelection sizes = SizeSelection::in;
    int warmup = 3;
    int repeat = 10;
    double timeout_s = 60;          // whole candidate
    double compile_timeout_s = 60;  // compilation alone
    RooflineMode roofline = RooflineMode::static_peak;
    uint64_t seed = 0;              // correctness inputs derive from this
    bool check_only = false;        // skip timing
    bool device_reference = false;  // every size's reference from the task's seed on the device
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
};

struct SizeResult {
    std::string label;
    bool heldout = false;
    bool correct = false;
    std::string error_kind;
    double error = 0, tolerance = 0;
    int64_t worst_index = -1;
    std::string diagnostics;        // per-size detail when it failed
    bool timed = false;
    double seconds = 0, seconds_min = 0, seconds_max = 0, cv = 0;
    int samples = 0;                // timed runs behind the median
    double achieved = 0;            // GB/s or GFLOP/s
    std::string unit;
    double ceiling = 0;             // the one in force (static or workload)
    double ceiling_static = 0, ceiling_workload = 0;
    double fraction = 0;
    double work = 0;                // bytes or FLOPs of one run
    bool implausible = false;       // fraction > 1.05 even after re-measuring
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
    std::string ceiling_source;           // "measured" | "datasheet" | "none"
    StageTimes stage_seconds;
    uint64_t seed = 0;
};

nlohmann::json to_json(const EvalRequest& r);
Expected<EvalRequest> eval_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const EvalResult& r);
Expected<EvalResult> eval_result_from_json(const nlohmann::json& j);

}  // namespace kevo
