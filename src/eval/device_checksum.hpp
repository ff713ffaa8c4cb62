// Checksums of buffer regions computed on the device by the built-in checksum kernel
// (src/eval/kernels/checksum.{cu,cl}): they prove a buffer unchanged without downloading it. The
// checksum is keyed (a random key per worker process) so that a candidate, which never sees the key,
// cannot make a change that keeps the sum; it is order-independent, so the device may add the
// words up in any order; and any change to a single 4-byte word always changes it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "backend/backend.hpp"
#include "core/expected.hpp"

namespace kevo {

struct ChecksumRegion {
    BufferHandle buffer;
    uint64_t offset = 0;  // bytes from the start of the buffer; any alignment
    uint64_t bytes = 0;   // the region must lie inside the buffer
};

class DeviceChecksum {
public:
    DeviceChecksum(Device& device, uint64_t key);
    ~DeviceChecksum();
    DeviceChecksum(const DeviceChecksum&) = delete;
    DeviceChecksum& operator=(const DeviceChecksum&) = delete;

    // One checksum per region, in order: one batch of launches, one small upload and one download.
    // Compiles the kernel and allocates its result buffer on first use.
    Expected<std::vector<uint64_t>> compute(std::span<const ChecksumRegion> regions);
    uint64_t key() const { return key_; }
    // Launch batches run so far (tests count them).
    uint64_t batches() const { return batches_; }

private:
    Expected<void> prepare(size_t slots);
    void append_launches(const ChecksumRegion& region, uint32_t slot, std::vector<Launch>& launches) const;

    Device& device_;
    uint64_t key_;
    std::optional<uint32_t> module_;
    uint32_t words_kernel_ = 0, bytes_kernel_ = 0;
    std::optional<BufferHandle> sums_;
    size_t slots_ = 0;  // regions the sums buffer holds
    uint64_t batches_ = 0;
};

// The same checksum computed on the host: the expected value of a known pattern (guard zones), and
// the reference the tests hold the kernel to.
uint64_t host_checksum(const void* data, uint64_t bytes, uint64_t key);

}  // namespace kevo
