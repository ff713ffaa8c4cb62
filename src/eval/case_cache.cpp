// See case_cache.hpp.
#include "eval/case_cache.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "task/registry.hpp"

namespace kevo {

uint64_t memory_fraction(double fraction) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    const double total = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 8e9;
    return static_cast<uint64_t>(total * fraction);
}

std::shared_ptr<const Case> CaseCache::get(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial) {
    const std::string& name = task.spec().name;
    const std::string key = fmt::format("{}|{}|{}|{}|{}", name, task_source_hash(name), size.label, seed, trial_name(trial));
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->key == key) {
            entries_.splice(entries_.begin(), entries_, it);
            return entries_.front().c;
        }
    auto c = std::make_shared<const Case>(task.make_case(size, seed, trial));
    uint64_t bytes = 0;
    for (const auto& b : c->buffers) bytes += b.bytes();
    if (bytes <= budget_) {
        entries_.push_front({key, c, bytes});
        used_ += bytes;
        while (used_ > budget_ && !entries_.empty()) {
            used_ -= entries_.back().bytes;
            entries_.pop_back();
        }
    }
    return c;
}

}  // namespace kevo
