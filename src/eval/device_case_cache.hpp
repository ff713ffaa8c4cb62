// Device-resident cases kept between evaluations in the worker: a search's candidates share the
// correctness seed, so the same (task, size, seed, trial) cases recur, and uploading their inputs
// again for every candidate would dominate the evaluation at the larger sizes. The cache is bounded:
// the least recently used case goes first, but never one the current evaluation has used. A hostile candidate may write anywhere in device memory, so a
// cached case is reused only when its pristine copies still match the checksums taken at creation;
// otherwise it is rebuilt.
#pragma once

#include <cstdint>
#include <list>
#include <string>

#include "backend/backend.hpp"
#include "core/expected.hpp"
#include "core/rng.hpp"
#include "eval/device_case.hpp"
#include "eval/device_checksum.hpp"
#include "task/task.hpp"

namespace kevo {

class DeviceCaseCache {
public:
    DeviceCaseCache(Device& device, uint64_t budget_bytes, uint64_t checksum_key = rng::fresh_seed());

    // The resident case for (task, size, seed, trial), whose host form is `c`: reused when intact,
    // else built (and kept when it fits the budget).
    Expected<DeviceCase> get(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial, const Case& c);
    // Marks the start of an evaluation: the cases it uses will not be evicted for one another.
    void begin_evaluation() { ++epoch_; }
    // Forgets every kept case (those a runner still holds stay allocated until it lets go).
    void clear() {
        entries_.clear();
        used_ = 0;
    }

    struct Counters {
        uint64_t built = 0;      // cases created (uploaded), rebuilds included
        uint64_t reused = 0;     // cases handed out again without an upload
        uint64_t corrupted = 0;  // cached cases whose pristine copies had changed (then rebuilt)
    };
    const Counters& counters() const { return counters_; }
    uint64_t resident_bytes() const { return used_; }
    DeviceChecksum& checksum() { return checksum_; }

private:
    struct Entry {
        std::string key;
        DeviceCase dc;
        uint64_t bytes = 0;
        uint64_t epoch = 0;  // the evaluation that used it last
    };
    // Builds a case; when the device is out of memory, drops every cached case and tries once more.
    Expected<DeviceCase> build(const Case& c);
    void keep(std::string key, const DeviceCase& dc);

    Device& device_;
    DeviceChecksum checksum_;
    uint64_t budget_, used_ = 0;
    uint64_t epoch_ = 0;
    std::list<Entry> entries_;  // most recent first
    Counters counters_;
};

// The budget for resident cases: a quarter of a GPU's memory; a tenth of a CPU device's, which is
// the host's own memory and already holds the host cases and references.
uint64_t device_case_budget(const DeviceInfo& info);

}  // namespace kevo
