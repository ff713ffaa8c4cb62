// What the search loop, the gate's caller and the bench need from an evaluation service: the device,
// an evaluation, a calibration and the ceilings in force. The Evaluator (evaluator.hpp: the scan, then
// the worker process under deadlines) is the one kevo runs; tests of promotion, strategies, resume,
// aggregates and reports supply a scripted one (tests/scripted_evaluator.hpp), so that what
// they check does not depend on real kernels or on timing noise.
#pragma once

#include "backend/backend.hpp"
#include "core/expected.hpp"
#include "eval/calibration.hpp"
#include "eval/eval_types.hpp"

namespace kevo {

class Evaluating {
public:
    virtual ~Evaluating() = default;

    virtual Expected<DeviceInfo> device() = 0;
    // Anything the candidate does is an EvalResult (its verdict); an Error is an environment fault.
    // compile_only: static scan, directives and compilation; nothing runs.
    virtual Expected<EvalResult> evaluate(const EvalRequest& request, bool compile_only = false) = 0;
    virtual Expected<Calibration> calibrate(bool quick) = 0;
    // The ceilings the evaluations score against when a request pins none: what a run or a study pins.
    virtual Expected<Calibration> ceilings() = 0;
    // How often the evaluation's worker had to be restarted (0 for one that has none).
    virtual int worker_restarts() const = 0;
};

}  // namespace kevo
