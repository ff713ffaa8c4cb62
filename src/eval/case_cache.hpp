// Built cases (inputs of one size and trial) kept between evaluations in the worker: they are pure
// functions of (task, size, seed, trial), and regenerating hundreds of megabytes of random inputs
// for every candidate would dominate a search's overhead at the larger profiles.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "task/task.hpp"

namespace kevo {

class CaseCache {
public:
    explicit CaseCache(uint64_t budget_bytes) : budget_(budget_bytes) {}

    std::shared_ptr<const Case> get(const Task& task, const SizeSpec& size, uint64_t seed, Trial trial);
    void clear() {
        entries_.clear();
        used_ = 0;
    }

private:
    struct Entry {
        std::string key;
        std::shared_ptr<const Case> c;
        uint64_t bytes = 0;
    };
    uint64_t budget_, used_ = 0;
    std::list<Entry> entries_;  // most recent first
};

// A budget for in-memory caches: a fraction of the machine's physical memory.
uint64_t memory_fraction(double fraction);

}  // namespace kevo
