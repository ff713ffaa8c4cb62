// Evicts the device's last-level cache between timed runs (outside the timing window), so that
// every timed run starts from DRAM: the runner and the vendor peers time on the same footing.
#pragma once

#include <cstdint>
#include <optional>

#include "backend/backend.hpp"

namespace kevo {

class CacheFlusher {
public:
    explicit CacheFlusher(Device& device) : device_(device) {}
    ~CacheFlusher();
    CacheFlusher(const CacheFlusher&) = delete;
    CacheFlusher& operator=(const CacheFlusher&) = delete;

    // Writes a buffer twice the size of the cache; compiles and allocates on first use.
    Expected<void> flush();

private:
    Device& device_;
    std::optional<uint32_t> module_;
    std::optional<uint32_t> kernel_;
    std::optional<BufferHandle> buffer_;
    uint64_t elements_ = 0;
};

}  // namespace kevo
