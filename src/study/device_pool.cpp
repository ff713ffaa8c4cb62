// See device_pool.hpp.
#include "study/device_pool.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>

#include <fmt/format.h>

namespace kevo {

DevicePool::DevicePool(std::vector<int> devices, int slots_per_device) : slots_(std::max(1, slots_per_device)) {
    for (int d : devices) busy_[d] = 0;
}

std::optional<int> DevicePool::acquire() {
    std::optional<int> best;
    for (const auto& [device, busy] : busy_)
        if (busy < slots_ && (!best || busy < busy_.at(*best))) best = device;
    if (best) ++busy_[*best];
    return best;
}

bool DevicePool::acquire(int device) {
    auto it = busy_.find(device);
    if (it == busy_.end() || it->second >= slots_) return false;
    ++it->second;
    return true;
}

void DevicePool::release(int device) {
    if (auto it = busy_.find(device); it != busy_.end()) {
        assert(it->second > 0 && "a device released more often than acquired");
        --it->second;
    } else if (auto left = left_busy_.find(device); left != left_busy_.end() && left->second > 0) {
        --left->second;
    }
}

void DevicePool::remove(int device, std::string why) {
    auto it = busy_.find(device);
    if (it == busy_.end()) return;
    left_busy_[device] = it->second;
    busy_.erase(it);
    removed_[device] = std::move(why);
}

std::vector<int> DevicePool::devices() const {
    std::vector<int> out;
    for (const auto& [device, busy] : busy_) out.push_back(device);
    return out;
}

int DevicePool::in_flight(int device) const {
    if (auto it = busy_.find(device); it != busy_.end()) return it->second;
    if (auto it = left_busy_.find(device); it != left_busy_.end()) return it->second;
    return 0;
}

Expected<std::vector<int>> parse_device_list(const std::string& text, int count) {
    const std::string accepted = fmt::format("a comma-separated list of device indices from 0 to {} (\"0,1\") or \"all\"",
                                             count - 1);
    if (count <= 0) return make_error("--devices: the backend has no device");
    std::vector<int> out;
    if (text == "all") {
        for (int d = 0; d < count; ++d) out.push_back(d);
        return out;
    }
    size_t at = 0;
    while (at <= text.size()) {
        const size_t end = std::min(text.find(',', at), text.size());
        const std::string entry = text.substr(at, end - at);
        int value = -1;
        const auto [ptr, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), value);
        if (entry.empty() || ec != std::errc() || ptr != entry.data() + entry.size() || value < 0 || value >= count)
            return make_error(fmt::format("--devices: \"{}\" is not a device index; expected {}", entry, accepted));
        if (std::find(out.begin(), out.end(), value) != out.end())
            return make_error(fmt::format("--devices: device {} is named twice", value));
        out.push_back(value);
        at = end + 1;
    }
    return out;
}

}  // namespace kevo
