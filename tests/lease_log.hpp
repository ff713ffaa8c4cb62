// Test helper: the device lease's debug log (KEVO_LEASE_LOG, see eval/device_lease.cpp), one
// "KEY PID ACQUIRED_NS RELEASED_NS" line per lease held, and the checks the tests make on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace kevo::test {

struct LeaseInterval {
    std::string key;
    long pid = 0;
    int64_t acquired = 0, released = 0;
};

inline std::vector<LeaseInterval> read_lease_log(const std::string& path) {
    std::vector<LeaseInterval> out;
    std::ifstream in(path);
    LeaseInterval i;
    while (in >> i.key >> i.pid >> i.acquired >> i.released) out.push_back(i);
    return out;
}

// The first pair of intervals on one lease that overlap, described; empty when none do.
inline std::string first_overlap(std::vector<LeaseInterval> intervals) {
    std::sort(intervals.begin(), intervals.end(), [](const auto& a, const auto& b) { return a.acquired < b.acquired; });
    for (size_t i = 1; i < intervals.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (intervals[j].key == intervals[i].key && intervals[j].released > intervals[i].acquired)
                return fmt::format("pid {} took {} at {} while pid {} held it until {}", intervals[i].pid, intervals[i].key,
                                   intervals[i].acquired, intervals[j].pid, intervals[j].released);
    return {};
}

// How many processes held a lease.
inline size_t holders(const std::vector<LeaseInterval>& intervals) {
    std::set<long> pids;
    for (const auto& i : intervals) pids.insert(i.pid);
    return pids.size();
}

}  // namespace kevo::test
