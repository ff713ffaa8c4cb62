// The evaluation cascade as it runs inside the worker process, next to the device: directives,
// compile, resources, correctness on every selected size (two trials each), timing (with extra
// rounds while noisy), a re-check of the timed output, and the score against the ceilings in force
// (re-timed, then re-measured, when a fraction is above what the device can do). Candidate faults
// end as a verdict in the EvalResult; nothing here throws for them. kevo's own faults (a reference
// that fails or does not fit host memory, a host allocation that fails) are an Error instead: an
// environment error, never a verdict on the candidate.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "eval/cache_flusher.hpp"
#include "eval/protocol.hpp"
#include "eval/case_cache.hpp"
#include "eval/case_run.hpp"
#include "eval/compile_stage.hpp"
#include "eval/device_case_cache.hpp"
#include "eval/device_lease.hpp"
#include "eval/ceiling_keeper.hpp"
#include "eval/eval_types.hpp"
#include "eval/reference_cache.hpp"
#include "task/task.hpp"

namespace kevo {

class Runner {
public:
    // `emit` receives progress events (stage events, eval/protocol.hpp) that the parent uses for deadlines.
    Runner(Device& device, ReferenceCache& references, CeilingKeeper& ceilings,
           std::function<void(const nlohmann::json&)> emit);

    Expected<EvalResult> evaluate(const EvalRequest& request);

private:
    // Why an evaluation ended early.
    struct Stop {
        Verdict verdict;
        std::string diagnostics;
    };
    // A size that passed its correctness trials. Its nominal case stays resident for timing while
    // that is cheap; otherwise (and in a check-only evaluation) `run` is empty and timing builds it
    // again. `shape` is the case without its buffers: what scoring reads.
    struct CheckedSize {
        const SizeSpec* size;
        std::shared_ptr<const Reference> ref;
        std::optional<CaseRun> run;
        std::shared_ptr<const Case> shape;
    };
    // An environment fault: ends the evaluation as an Error, not a verdict.
    struct EnvironmentFault {
        std::string message;
    };

    Device& device_;
    ReferenceCache& references_;
    CeilingKeeper& ceilings_;
    CaseCache cases_{memory_fraction(0.15)};
    std::function<void(const nlohmann::json&)> emit_;
    std::map<std::string, CompileOutcome> compiled_;  // keyed by hash of (source, defines, arch)
    std::map<std::string, uint32_t> image_modules_;    // keyed by hash of the image
    CacheFlusher flusher_{device_};
    DeviceCaseCache device_cases_{device_, device_case_budget(device_.info())};
    double reference_seconds_ = 0;  // of the evaluation in progress: kept off its correctness time
    uint64_t resident_kept_bytes_ = 0;  // device bytes of the checked sizes kept resident for timing
    std::string where_;  // the stage in progress, for an out-of-memory message
    std::optional<EnvironmentFault> environment_fault_;  // set by check_size when kevo's reference fails

    Expected<EvalResult> evaluate_cascade(const EvalRequest& request);
    // Every selected size's host footprint against the memory the host has: the size that cannot fit,
    // before the candidate runs.
    std::optional<EnvironmentFault> host_memory_shortfall(const Task& task, const std::vector<const SizeSpec*>& sizes);

    // `arch` empty: the device's own; else the candidate's declared target.
    Expected<CompileOutcome> compile(const std::string& source, const std::vector<std::string>& defines,
                                     const std::string& arch);
    // Entry points, resources and geometry of every kernel of the task; a Stop when one is unusable.
    std::optional<Stop> bind(const Task& task, const CompileStage& compiled, BoundKernels& kernels, EvalResult& result);
    // A kernel image compiled ahead of time (Triton's cubin), loaded once per distinct image.
    Expected<uint32_t> image_module(const KernelImage& image);
    // Both trials of one size; the nominal case is kept for timing.
    std::optional<Stop> check_size(const Task& task, const SizeSpec& size, const EvalRequest& request,
                                   const BoundKernels& kernels, SizeResult& sr, std::vector<CheckedSize>& kept);
    std::shared_ptr<const Reference> reference_for(const Task& task, const SizeSpec& size,
                                                   const std::shared_ptr<const Case>& c, uint64_t seed, Trial trial,
                                                   const EvalRequest& request, std::string& error);
    // Timing and the re-check of one size; fills the size's timing fields.
    std::optional<Stop> time_size(const Task& task, CheckedSize& k, const EvalRequest& request,
                                  const BoundKernels& kernels, SizeResult& sr);
    // Fractions against the ceilings in force, re-measuring them once when a size is beyond the
    // device; flags what stays above 1.05.
    void score(const Task& task, const std::vector<CheckedSize>& kept, const EvalRequest& request, EvalResult& result);
    // The task's own seed run on this device: the reference where the CPU would be too slow.
    Expected<Reference> device_reference(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial,
                                         std::shared_ptr<const Case> c);
    // One reference kernel (the seed, or a recipe_reference) run on the case: its result buffers.
    Expected<std::vector<std::vector<std::byte>>> run_reference_kernel(const Task& task, const SizeSpec& size,
                                                                       uint64_t seed, Trial trial,
                                                                       std::shared_ptr<const Case> c, std::string source,
                                                                       const std::string& stem);
    // The device's lease, waited for as the "lease" stage; none (and a warning) when it cannot be taken.
    std::optional<DeviceLease> take_lease(EvalResult& result);
    void stage(Stage name, const std::string& size = {}, const char* trial = nullptr, size_t launches = 0);
};

}  // namespace kevo
