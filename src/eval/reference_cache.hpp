// CPU references are the slow part of an evaluation; they are pure functions of
// (task source, size, seed, trial), so they are kept in memory and, when expensive, on disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <list>
#include <string>

#include "task/task.hpp"

namespace kevo {

class ReferenceCache {
public:
    // dir: where references that took long to compute are stored (empty: memory only).
    explicit ReferenceCache(std::filesystem::path dir, uint64_t memory_budget_bytes = 4ull << 30);

    // The reference for a case; `computed` tells whether it was computed now (for stage timing).
    Reference get(const Task& task, const SizeSpec& size, const Case& c, uint64_t seed, Trial trial, bool* computed = nullptr);

    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

private:
    struct Entry {
        std::string key;
        Reference reference;
        uint64_t bytes = 0;
    };
    std::filesystem::path dir_;
    uint64_t budget_;
    uint64_t used_ = 0;
    std::list<Entry> entries_;  // most recent first
    uint64_t hits_ = 0, misses_ = 0;

    bool load(const std::string& key, Reference& out) const;
    void store(const std::string& key, const Reference& ref) const;
    void remember(const std::string& key, const Reference& ref);
};

}  // namespace kevo
