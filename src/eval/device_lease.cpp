// See device_lease.hpp. With KEVO_LEASE_LOG set, each release appends "KEY PID ACQUIRED_NS
// RELEASED_NS" (CLOCK_MONOTONIC, the same clock in every process) to that file: the tests read it
// to show that no two holders overlapped.
#include "eval/device_lease.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace kevo {
namespace {

int64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void log_interval(const std::string& key, int64_t acquired_ns, int64_t released_ns) {
    const char* path = std::getenv("KEVO_LEASE_LOG");
    if (!path || !*path) return;
    const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const std::string line = fmt::format("{} {} {} {}\n", key, ::getpid(), acquired_ns, released_ns);
    if (::write(fd, line.data(), line.size()) < 0) {
        // A debugging aid only: the lease itself is unaffected.
    }
    ::close(fd);
}

}  // namespace

std::string device_lease_key(const DeviceInfo& device) {
    if (device.is_cpu) return "host";
    std::string name;
    for (char c : device.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return fmt::format("gpu-{}-{}", device.index, name);
}

std::filesystem::path lease_dir() {
    if (const char* env = std::getenv("KEVO_LEASE_DIR"); env && *env) return env;
    return "/tmp/kevo-leases";
}

Expected<DeviceLease> DeviceLease::acquire(const DeviceInfo& device) {
    const auto dir = lease_dir();
    std::error_code ec;
    if (std::filesystem::create_directories(dir, ec))
        ::chmod(dir.c_str(), 01777);  // every user's kevo takes the same leases
    const std::string key = device_lease_key(device);
    const auto path = dir / (key + ".lock");
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return make_error(fmt::format("cannot open the device lease {}: {}", path.string(), std::strerror(errno)));
    ::fchmod(fd, 0666);  // the umask may have narrowed it; another user must be able to open it too
    while (::flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        return make_error(fmt::format("cannot take the device lease {}: {}", path.string(), std::strerror(err)));
    }
    return DeviceLease(fd, key, monotonic_ns());
}

DeviceLease::DeviceLease(DeviceLease&& other) noexcept
    : fd_(other.fd_), key_(std::move(other.key_)), acquired_ns_(other.acquired_ns_) {
    other.fd_ = -1;
}

DeviceLease& DeviceLease::operator=(DeviceLease&& other) noexcept {
    if (this == &other) return *this;
    release();
    fd_ = other.fd_;
    key_ = std::move(other.key_);
    acquired_ns_ = other.acquired_ns_;
    other.fd_ = -1;
    return *this;
}

DeviceLease::~DeviceLease() { release(); }

void DeviceLease::release() {
    if (fd_ < 0) return;
    const int64_t released = monotonic_ns();
    ::close(fd_);  // closing the descriptor releases the flock
    fd_ = -1;
    log_interval(key_, acquired_ns_, released);
}

}  // namespace kevo
