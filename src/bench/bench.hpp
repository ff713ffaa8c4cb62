// `kevo bench`: the suite's seed and best-known kernels on one device. First every best-known
// kernel is checked (correctness only) at every size of every check profile, held-out included;
// then seed and best are evaluated in full (correctness, timing, score) at the timed profile, and
// the task's peers are timed beside them. Results are data; bench_render turns them into text,
// markdown and JSON.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "bench/peers.hpp"
#include "eval/calibration.hpp"
#include "eval/eval_types.hpp"
#include "eval/evaluating.hpp"

namespace kevo {

struct BenchOptions {
    std::vector<std::string> tasks;           // empty: the whole suite, in suite order
    std::string profile = "large";            // the timed profile
    std::vector<std::string> check_profiles;  // best kernels checked here first (every size)
    int warmup = EvalRequest{}.warmup, repeat = EvalRequest{}.repeat;  // the evaluation's defaults
    double timeout_s = 600;                   // per evaluation
    uint64_t seed = 1;                        // correctness inputs (fixed: reruns compare)
    bool peers = true;
    std::string kernels_dir;                  // <dir>/<task>.<cu|cl|py> replaces the shipped best-known kernel
    std::string state_path;                   // progress saved here; a matching file is resumed
    std::string language;                     // the kernels' language (kernel_language.hpp); empty: the backend's own
};

struct BenchCheck {
    std::string profile;
    Verdict verdict = Verdict::crash;
    std::string diagnostics;  // when it failed
    double seconds = 0;
};

struct BenchSize {
    std::string label;
    bool heldout = false;
    std::optional<SizeResult> seed, best;
    std::vector<PeerTiming> peers;
    // seed time / best time, when both were timed.
    std::optional<double> speedup() const;
    // peer time / best time, when both were timed and the peer's output passed its check.
    std::optional<double> speedup_over(const PeerTiming& peer) const;
};

struct BenchTask {
    std::string task;
    std::string bound;                  // "bandwidth" | "compute"
    std::optional<EvalResult> seed, best;
    std::string best_missing;           // why there is no best-known kernel here (else empty)
    std::string best_origin;            // where the best-known kernel came from
    std::string seed_hash, best_hash;   // content hashes of the sources benched (hex64; empty: none)
    std::vector<BenchCheck> checks;     // the best kernel's correctness checks, per profile
    std::vector<BenchSize> sizes;
    bool ok() const;                    // seed and best (where present) passed everything
};

struct BenchReport {
    DeviceInfo device;
    std::string language;               // the kernels' language
    std::string profile;
    std::vector<std::string> check_profiles;
    std::string started;                // UTC, ISO 8601: when the first invocation began
    // Every invocation that contributed (more than one when resumed with --state): when it began
    // and the ceilings in force, so that rows measured under different calibrations are told apart.
    struct Invocation {
        std::string started;
        double bandwidth_gbs = 0, fp32_gflops = 0;
    };
    std::vector<Invocation> invocations;
    std::optional<Calibration> ceilings;  // the measured ceilings the fractions are of
    std::vector<BenchTask> tasks;
    // Why the bench stopped before its end ("interrupted by SIGINT"); empty when it ran to the end.
    // An interrupted report holds what was measured until then (tasks may lack their timing).
    std::string interrupted;
    bool ok() const;
};

struct BenchCallbacks {
    // Opens the device for the peers on first use (an error shows as every peer's error).
    std::function<Expected<Device*>()> peer_device;
    std::function<void(const std::string&)> progress;  // one line per step; may be empty
    std::function<void(const std::string&)> notice;    // what the user must read (state re-measured); may be empty
    std::function<void(const BenchTask&)> task_done;    // each task as soon as it is complete; may be empty
};

// A signal (core/interrupt.hpp) ends the bench after the step it cut short: the report so far comes
// back with `interrupted` set, not an error.
Expected<BenchReport> run_bench(Evaluating& evaluator, const BenchOptions& options, const BenchCallbacks& callbacks);

nlohmann::json to_json(const BenchReport& report);
nlohmann::json invocations_json(const BenchReport& report);

}  // namespace kevo
