// The lock on a run: held by the one process that drives it (kevo run, kevo run --resume), so a
// second process cannot write the same run. It is an flock on a file beside the database
// (<db>.locks/<run_id>.lock), which the kernel releases when the holder ends, however it ends: a
// killed run is never left locked. The file names its holder (pid, host, since) for the error the
// second process gets.
#pragma once

#include <string>

#include "core/expected.hpp"

namespace kevo {

class RunLock {
public:
    // Takes the lock, or says who holds it.
    static Expected<RunLock> acquire(const std::string& db_path, const std::string& run_id);
    // Whether some process holds the lock now (this one included, through another RunLock), and
    // whether the run ever had a lock file (runs of an older kevo have none).
    enum class State { absent, free, held };
    static State probe(const std::string& db_path, const std::string& run_id);
    // Removes a lock file that nobody holds (a deleted run's).
    static void remove_stale(const std::string& db_path, const std::string& run_id);

    RunLock(RunLock&& other) noexcept;
    RunLock& operator=(RunLock&&) = delete;
    RunLock(const RunLock&) = delete;
    ~RunLock();

private:
    explicit RunLock(int fd) : fd_(fd) {}
    int fd_ = -1;
};

}  // namespace kevo
