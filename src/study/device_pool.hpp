// The devices a sweep places its runs on (`kevo sweep --devices 0,1,3|all`): each takes `slots`
// runs at once (the study's concurrency per device). A new run goes to the device with the fewest
// runs in flight (the lowest index on a tie), a resumed run back to the device it was measured on; a
// device that faults leaves the pool, and its runs are placed elsewhere. Timing stays serialised per
// device by the device lease (eval/device_lease.hpp); two devices time at once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

class DevicePool {
public:
    DevicePool(std::vector<int> devices, int slots_per_device);

    // A free slot on the least busy device in the pool; none when every slot is taken.
    std::optional<int> acquire();
    // A free slot on `device`; false when it is busy or not (or no longer) in the pool.
    bool acquire(int device);
    void release(int device);
    // The device leaves the pool for good (its runs in flight still release their slots).
    void remove(int device, std::string why);

    bool contains(int device) const { return busy_.count(device) > 0; }
    bool empty() const { return busy_.empty(); }
    int slots() const { return slots_; }
    std::vector<int> devices() const;
    int in_flight(int device) const;
    // The devices that left, with why.
    const std::map<int, std::string>& removed() const { return removed_; }

private:
    int slots_;
    std::map<int, int> busy_;  // device -> runs in flight
    std::map<int, int> left_busy_;  // devices removed while runs were on them
    std::map<int, std::string> removed_;
};

// `--devices` as given ("0,1,3" or "all") against the `count` devices the backend has: the indices,
// in order, each once; an error naming the bad entry and what would be accepted.
Expected<std::vector<int>> parse_device_list(const std::string& text, int count);

}  // namespace kevo
