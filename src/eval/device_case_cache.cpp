// See device_case_cache.hpp.
#include "eval/device_case_cache.hpp"

#include <cassert>

#include <fmt/format.h>

#include "task/registry.hpp"

namespace kevo {

uint64_t device_case_budget(const DeviceInfo& info) {
    return static_cast<uint64_t>(static_cast<double>(info.global_mem_bytes) * (info.is_cpu ? 0.10 : 0.25));
}

DeviceCaseCache::DeviceCaseCache(Device& device, uint64_t budget_bytes, uint64_t checksum_key)
    : device_(device), checksum_(device, checksum_key), budget_(budget_bytes) {}

Expected<DeviceCase> DeviceCaseCache::get(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial,
                                          const Case& c) {
    const std::string& name = task.spec().name;
    // The task's source hash is part of the key, as in CaseCache: an edited task builds other cases.
    std::string key = fmt::format("{}|{}|{}|{}|{}", name, task_source_hash(name), size.label, seed, trial_name(trial));
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->key != key) continue;
        assert(it->dc.matches(c) && "a cached device case no longer matches its host case");
        auto damage = it->dc.verify_pristine();
        if (!damage) return damage.error();
        if (damage->empty()) {
            entries_.splice(entries_.begin(), entries_, it);
            entries_.front().epoch = epoch_;
            ++counters_.reused;
            return entries_.front().dc;
        }
        ++counters_.corrupted;
        used_ -= it->bytes;
        entries_.erase(it);
        break;
    }
    auto dc = build(c);
    if (!dc) return dc.error();
    keep(std::move(key), *dc);
    return dc;
}

Expected<DeviceCase> DeviceCaseCache::build(const Case& c) {
    auto dc = DeviceCase::create(device_, checksum_, c);
    if (!dc && !entries_.empty() && !device_.is_poisoned()) {
        // Cases still held by a runner stay allocated; the rest is freed before the second try.
        entries_.clear();
        used_ = 0;
        dc = DeviceCase::create(device_, checksum_, c);
    }
    if (dc) ++counters_.built;
    return dc;
}

// Only cases no evaluation has used since begin_evaluation() are evicted (oldest first), and only
// when that makes room: a search visits the same cases in the same order every evaluation, and
// plain LRU with less room than one evaluation needs would evict each case just before its next
// use. This way the cases that fit stay, and the rest are built for each use.
void DeviceCaseCache::keep(std::string key, const DeviceCase& dc) {
    const uint64_t bytes = dc.device_bytes();
    uint64_t freeable = 0;
    for (const auto& e : entries_)
        if (e.epoch < epoch_) freeable += e.bytes;
    if (used_ - freeable + bytes > budget_) return;
    while (used_ + bytes > budget_) {
        assert(entries_.back().epoch < epoch_ && "the current evaluation's cases are the most recent");
        used_ -= entries_.back().bytes;
        entries_.pop_back();
    }
    entries_.push_front({std::move(key), dc, bytes, epoch_});
    used_ += bytes;
}

}  // namespace kevo
