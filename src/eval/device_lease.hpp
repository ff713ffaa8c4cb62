// The timing lease of a device: a machine-wide exclusive lock that a worker holds while its timed
// runs execute, so that no other kevo process (another run of a sweep, a second `kevo run`, a
// `kevo bench`) runs kernels on that device meanwhile and a measurement does not depend on what
// else is in flight. On a GPU only the timed phase is leased (compilation and correctness may
// overlap); a CPU device is the host itself, so there the lease covers all device work. It is an
// flock, released by the kernel however its holder ends. Waiting for it is not the candidate's
// time: the worker announces the wait as the "lease" stage, which no deadline counts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "backend/backend.hpp"
#include "core/expected.hpp"

namespace kevo {

class DeviceLease {
public:
    // Waits until this process holds the lease of `device`. An Error when the lock file cannot be opened.
    static Expected<DeviceLease> acquire(const DeviceInfo& device);

    DeviceLease(DeviceLease&& other) noexcept;
    DeviceLease& operator=(DeviceLease&& other) noexcept;  // releases this one's lease first
    DeviceLease(const DeviceLease&) = delete;
    ~DeviceLease();  // releases it

private:
    void release();
    DeviceLease(int fd, std::string key, int64_t acquired_ns) : fd_(fd), key_(std::move(key)), acquired_ns_(acquired_ns) {}
    int fd_ = -1;
    std::string key_;
    int64_t acquired_ns_ = 0;
};

// Which lease a device takes: "host" for every CPU device (they share the cores), else one per GPU
// ("gpu-<index>-<name>"). A GPU seen through two backends may get two leases when their indices differ.
std::string device_lease_key(const DeviceInfo& device);
// $KEVO_LEASE_DIR, else /tmp/kevo-leases: one folder for every user of the machine.
std::filesystem::path lease_dir();

}  // namespace kevo
