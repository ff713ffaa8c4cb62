// See replay_timing.hpp.
#include "eval/replay_timing.hpp"

#include <algorithm>
#include <cmath>

#include "task/task.hpp"

namespace kevo {

int replay_copies(const std::string& profile, double sol_seconds, uint64_t case_device_bytes) {
    if (profile != kTraceProfile || !(sol_seconds > 0) || sol_seconds >= kLaunchBoundSeconds) return 0;
    const int by_time = std::clamp(static_cast<int>(std::ceil(kReplaySeconds / sol_seconds)), kMinReplayCopies,
                                   kMaxReplayCopies);
    const uint64_t by_memory = kReplayDeviceBytes / std::max<uint64_t>(case_device_bytes, 1);
    const int copies = static_cast<int>(std::min<uint64_t>(by_time, by_memory));
    return copies >= 2 ? copies : 0;
}

std::optional<Fault> ReplaySet::add_copies(int copies, DeviceChecksum& checksum, const BoundKernels& kernels,
                                           const Task& task, const SizeSpec& size, const Reference& ref) {
    while (this->copies() < copies) {
        auto copy = CaseRun::create_copy(*device_, checksum, first_->shared_case(), kernels);
        if (!copy) break;  // no room: fewer copies (kevo's limit, not the candidate's)
        if (auto fault = copy->run()) return fault;
        if (auto fault = copy->verify(task, size, ref, nullptr)) return fault;
        if (auto r = copy->remember_outputs(); !r) return Fault{Verdict::runtime_error, r.error().message};
        others_.push_back(std::move(*copy));
    }
    return std::nullopt;
}

Expected<double> ReplaySet::run_timed(CacheFlusher& flusher) {
    std::vector<Launch> launches = first_->launches();
    if (auto r = first_->reset(); !r) return r.error();
    for (auto& copy : others_) {
        if (auto r = copy.reset(); !r) return r.error();
        launches.insert(launches.end(), copy.launches().begin(), copy.launches().end());
    }
    if (auto r = flusher.flush(); !r) return r.error();
    auto seconds = device_->run_timed_replay(launches);
    if (!seconds) return seconds.error();
    return *seconds / copies();
}

std::optional<Fault> ReplaySet::recheck(const Task& task, const SizeSpec& size, const Reference& ref) {
    if (auto fault = first_->recheck(task, size, ref)) return fault;
    for (auto& copy : others_)
        if (auto fault = copy.recheck(task, size, ref)) return fault;
    return std::nullopt;
}

}  // namespace kevo
