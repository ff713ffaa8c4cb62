// What every peer shares (peers.cpp, gemm_peers.cpp): device buffers released whatever happens, and
// the timing protocol of `kevo bench` (warm-ups, then timed calls each after a cache flush; the
// median counts).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "backend/backend.hpp"
#include "bench/peers.hpp"
#include "eval/cache_flusher.hpp"

namespace kevo {

// Device buffers released when the peer is done with them, whatever happened.
class ScopedBuffers {
public:
    explicit ScopedBuffers(Device& device) : device_(device) {}
    ScopedBuffers(const ScopedBuffers&) = delete;
    ScopedBuffers& operator=(const ScopedBuffers&) = delete;
    ~ScopedBuffers();
    Expected<BufferHandle> upload(const void* data, size_t bytes);
    Expected<BufferHandle> upload(const std::vector<float>& data) { return upload(data.data(), data.size() * sizeof(float)); }

private:
    Device& device_;
    std::vector<BufferHandle> buffers_;
};

// `warmup` untimed calls, then `repeat` calls each after a cache flush; the median, least and most
// go into `peer`, or the first error into peer.error.
void time_calls(PeerTiming& peer, CacheFlusher& flusher, int warmup, int repeat, const std::function<Expected<double>()>& call);

}  // namespace kevo
