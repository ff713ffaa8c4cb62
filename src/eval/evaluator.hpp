// The parent side of evaluation: the static scan, then the worker under deadlines. Returns an
// EvalResult for anything a candidate does (timeouts and crashes included); an Error only for
// environment faults (no device, worker cannot start, unknown task, and kevo's own reference: one
// that fails, runs out of host memory or past its deadline, or a worker that dies computing it).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "eval/calibration.hpp"
#include "eval/eval_types.hpp"
#include "eval/evaluating.hpp"
#include "eval/worker_client.hpp"

namespace kevo {

// 7200 s, or KEVO_REFERENCE_TIMEOUT_S when set.
double default_reference_timeout_s();

struct EvaluatorOptions {
    std::string backend = "opencl";
    int device = 0;
    std::string offline_arch;      // non-empty: compile-only, no device (NVRTC)
    std::string worker_executable; // the kevo binary (empty: this process's own binary)
    // Per launch of a run, on top of the whole-candidate deadline: the larger of this and a tenth of
    // the request's timeout (a long --timeout, given for large sizes on a CPU, lengthens a launch's too).
    double launch_timeout_s = 20;
    // kevo's own reference stage of one size and trial (inputs, CPU reference or the seed on the
    // device, upload); beyond it the evaluation is an environment error. KEVO_REFERENCE_TIMEOUT_S
    // overrides the default.
    double reference_timeout_s = default_reference_timeout_s();
    std::function<void(const std::string&)> progress;  // stage lines for humans; may be empty
};

class Evaluator final : public Evaluating {
public:
    explicit Evaluator(EvaluatorOptions options);

    Expected<DeviceInfo> device() override;
    Expected<EvalResult> evaluate(const EvalRequest& request, bool compile_only = false) override;
    Expected<Calibration> calibrate(bool quick) override;
    // Cached, or measured now on first use.
    Expected<Calibration> ceilings() override;
    int worker_restarts() const override { return client_.restarts(); }

private:
    EvaluatorOptions options_;
    // An exchange's event check that forwards progress lines and stops on Ctrl-C / SIGTERM.
    std::function<std::optional<std::string>(const WorkerEvent*)> progress_only() const;
    WorkerClient client_;
};

}  // namespace kevo
