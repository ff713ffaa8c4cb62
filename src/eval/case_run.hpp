// One case of one size resident on the device, with the launches of the kernels bound to it: the
// unit that the correctness trials, the re-check after timing and the device reference all run.
// run() restores the state and submits every launch as one unit; verify() checks the guard zones,
// the inputs and the outputs, in that order, and says what a candidate did wrong as a verdict.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "eval/cache_flusher.hpp"
#include "eval/device_case.hpp"
#include "eval/device_case_cache.hpp"
#include "eval/directives.hpp"
#include "eval/eval_types.hpp"
#include "task/task.hpp"

namespace kevo {

// A module's entry points with the geometry each is launched with.
struct BoundKernels {
    std::map<std::string, uint32_t> handles;
    std::map<std::string, Geometry> geometry;
};

// What a candidate did wrong in a run: the verdict and why.
struct Fault {
    Verdict verdict = Verdict::runtime_error;
    std::string message;
};

class CaseRun {
public:
    // The case of (size, seed, trial), resident from an earlier evaluation when it is still intact.
    static Expected<CaseRun> create(Device& device, DeviceCaseCache& cases, const Task& task, const SizeSpec& size,
                                    uint64_t seed, Trial trial, std::shared_ptr<const Case> c, const BoundKernels& kernels);

    // Another copy of the same case in buffers of its own (never cached): a replay runs several
    // back to back, each from its own state, so that none reads what another wrote.
    static Expected<CaseRun> create_copy(Device& device, DeviceChecksum& checksum, std::shared_ptr<const Case> c,
                                         const BoundKernels& kernels);

    const Case& the_case() const { return *case_; }
    const std::shared_ptr<const Case>& shared_case() const { return case_; }
    const std::vector<Launch>& launches() const { return launches_; }
    uint64_t device_bytes() const { return dc_.device_bytes(); }

    // Restores state, poisons outputs, then runs every launch; a device error is the candidate's.
    std::optional<Fault> run();
    // The same as one timed run: restore, flush the cache (outside the window), time the launches.
    Expected<double> run_timed(CacheFlusher& flusher);
    // Restores the state and poisons the outputs, as before every run (a replay resets each copy).
    Expected<void> reset();
    // Guards intact, inputs unchanged, then the task's check of the outputs against `ref`. `check`
    // receives the check's result whenever the outputs were compared.
    std::optional<Fault> verify(const Task& task, const SizeSpec& size, const Reference& ref, CheckResult* check);
    // After a verify() that passed: the outputs' checksums, so that recheck() can tell a later
    // output bit-identical to this checked one without a download.
    Expected<void> remember_outputs();
    // The re-check after the timed runs: guards, inputs, the pristine copies (a write there would
    // have changed what every timed run started from), then the outputs: bit-identical to the
    // remembered ones, or downloaded and checked again.
    std::optional<Fault> recheck(const Task& task, const SizeSpec& size, const Reference& ref);
    Expected<std::vector<std::vector<std::byte>>> outputs();

private:
    CaseRun(Device& device, std::shared_ptr<const Case> c, DeviceCase dc, std::vector<Launch> launches)
        : device_(&device), case_(std::move(c)), dc_(std::move(dc)), launches_(std::move(launches)) {}
    // Guards intact and inputs unchanged; the first fault found.
    std::optional<Fault> check_buffers();
    Device* device_;
    std::shared_ptr<const Case> case_;
    DeviceCase dc_;
    std::vector<Launch> launches_;
};

}  // namespace kevo
