// See run_lock.hpp.
#include "store/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/files.hpp"

namespace kevo {
namespace {

std::filesystem::path lock_path(const std::string& db_path, const std::string& run_id) {
    return std::filesystem::path(db_path + ".locks") / (run_id + ".lock");
}

std::string host_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "?";
    return name;
}

}  // namespace

Expected<RunLock> RunLock::acquire(const std::string& db_path, const std::string& run_id) {
    const auto path = lock_path(db_path, run_id);
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return make_error(fmt::format("cannot create the lock of run {} ({}): {}", run_id, path.string(), std::strerror(errno)));
    // A moment's retry: another process's probe (kevo report) holds a shared lock for an instant.
    int locked = -1;
    for (int attempt = 0; attempt < 5 && locked != 0; ++attempt) {
        locked = ::flock(fd, LOCK_EX | LOCK_NB);
        if (locked != 0 && errno == EWOULDBLOCK) ::usleep(20000);
    }
    if (locked != 0) {
        const int err = errno;
        ::close(fd);
        if (err != EWOULDBLOCK)
            return make_error(fmt::format("cannot lock run {} ({}): {}", run_id, path.string(), std::strerror(err)));
        auto holder = read_text_file(path);
        return make_error(fmt::format("run {} is being run by another process ({}); wait for it to finish or stop it "
                                      "(Ctrl-C or kill; it stays resumable)",
                                      run_id, holder && !holder->empty() ? *holder : "its lock names no holder"));
    }
    const std::string holder = fmt::format("pid {} on {}, since {}", ::getpid(), host_name(), utc_now_iso8601());
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
        // The lock holds regardless; only the holder's description is missing.
    }
    return RunLock(fd);
}

RunLock::State RunLock::probe(const std::string& db_path, const std::string& run_id) {
    const int fd = ::open(lock_path(db_path, run_id).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return State::absent;
    const bool free = ::flock(fd, LOCK_SH | LOCK_NB) == 0;
    ::close(fd);  // also drops the probe's own shared lock
    return free ? State::free : State::held;
}

void RunLock::remove_stale(const std::string& db_path, const std::string& run_id) {
    if (probe(db_path, run_id) == State::held) return;
    std::error_code ec;
    std::filesystem::remove(lock_path(db_path, run_id), ec);
}

RunLock::RunLock(RunLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

RunLock::~RunLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace kevo
