// CPU references are the slow part of an evaluation; they are pure functions of
// (task source, size, seed, trial), so they are kept in memory and, when expensive, on disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include "core/expected.hpp"
#include "task/task.hpp"

namespace kevo {

class ReferenceCache {
public:
    // dir: where references that took long to compute are stored (empty: memory only).
    explicit ReferenceCache(std::filesystem::path dir, uint64_t memory_budget_bytes = 4ull << 30);

    // The reference for a case; `computed` tells whether it was computed now (for stage timing).
    Reference get(const Task& task, const SizeSpec& size, const Case& c, uint64_t seed, Trial trial, bool* computed = nullptr);
    // Same without copying: large references are shared with the cache.
    std::shared_ptr<const Reference> share(const Task& task, const SizeSpec& size, const Case& c, uint64_t seed,
                                           Trial trial, bool* computed = nullptr);

    // Same, for a reference computed some other way (a trusted kernel on a device); `origin`
    // becomes part of the key (e.g. the device name).
    Expected<std::shared_ptr<const Reference>> get_or_compute(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial,
                                       const std::string& origin, const std::function<Expected<Reference>()>& compute);

    // Forgets the references held in memory (the disk copies stay).
    void clear_memory() {
        entries_.clear();
        used_ = 0;
    }

    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

private:
    struct Entry {
        std::string key;
        std::shared_ptr<const Reference> reference;
        uint64_t bytes = 0;
    };
    std::filesystem::path dir_;
    uint64_t budget_;
    uint64_t used_ = 0;
    std::list<Entry> entries_;  // most recent first
    uint64_t hits_ = 0, misses_ = 0;

    std::string key_for(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial, const std::string& origin) const;
    std::shared_ptr<const Reference> lookup(const std::string& key);
    bool load(const std::string& key, Reference& out) const;
    void store(const std::string& key, const Reference& ref) const;
    void remember(const std::string& key, std::shared_ptr<const Reference> ref);
};

}  // namespace kevo
