// Launch-bound sizes of the trace profile, timed as serving runs them: a decode step replays a
// recorded CUDA graph, so the host's few microseconds per launch are not in the kernel's time. A
// size whose speed-of-light time is below kLaunchBoundSeconds is timed as one submission of several
// copies of its case back to back (a CUDA graph; OpenCL: every enqueue, one wait), per copy. Each
// copy has buffers of its own, restored and poisoned before every replay and checked afterwards,
// so a kernel that counts its launches and skips work in later ones is caught like any other.
#pragma once

#include <string>
#include <vector>

#include "eval/case_run.hpp"

namespace kevo {

inline constexpr double kLaunchBoundSeconds = 10e-6;  // a few launch latencies
inline constexpr double kReplaySeconds = 200e-6;      // speed-of-light time of one replay, all copies
inline constexpr int kMinReplayCopies = 8, kMaxReplayCopies = 64;
inline constexpr uint64_t kReplayDeviceBytes = uint64_t{1} << 30;  // all copies together

// How many copies a size is replayed as: 0 when it is timed one run at a time (any profile but
// trace, a size not launch-bound, or ceilings unknown).
int replay_copies(const std::string& profile, double sol_seconds, uint64_t case_device_bytes);

class ReplaySet {
public:
    explicit ReplaySet(Device& device, CaseRun& first) : device_(&device), first_(&first) {}

    // Adds up to `copies` - 1 copies of the first run's case, each run once and checked against
    // `ref`. A copy the device has no room for ends the adding (copies() says how many there are);
    // a wrong output is the candidate's fault.
    std::optional<Fault> add_copies(int copies, DeviceChecksum& checksum, const BoundKernels& kernels, const Task& task,
                                    const SizeSpec& size, const Reference& ref);
    int copies() const { return 1 + static_cast<int>(others_.size()); }
    size_t launches_per_replay() const { return first_->launches().size() * copies(); }

    // Restores every copy, flushes the cache, then times one replay of all of them: seconds per copy.
    Expected<double> run_timed(CacheFlusher& flusher);
    // After the timed replays: every copy's guards, inputs, pristine copies and outputs.
    std::optional<Fault> recheck(const Task& task, const SizeSpec& size, const Reference& ref);

private:
    Device* device_;
    CaseRun* first_;
    std::vector<CaseRun> others_;
};

}  // namespace kevo
