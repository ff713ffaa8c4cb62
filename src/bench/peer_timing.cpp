// The shared peer machinery (see peer_timing.hpp).
#include "bench/peer_timing.hpp"

#include "core/stats.hpp"

namespace kevo {

ScopedBuffers::~ScopedBuffers() {
    if (device_.is_poisoned()) return;
    for (auto b : buffers_) device_.release(b);
}

Expected<BufferHandle> ScopedBuffers::upload(const void* data, size_t bytes) {
    auto b = device_.allocate(bytes);
    if (!b) return b.error();
    buffers_.push_back(*b);
    if (auto r = device_.upload(*b, 0, data, bytes); !r) return r.error();
    return *b;
}

void time_calls(PeerTiming& peer, CacheFlusher& flusher, int warmup, int repeat, const std::function<Expected<double>()>& call) {
    for (int i = 0; i < warmup; ++i) {
        if (auto t = call(); !t) {
            peer.error = t.error().message;
            return;
        }
    }
    std::vector<double> samples;
    for (int i = 0; i < repeat; ++i) {
        if (auto f = flusher.flush(); !f) {
            peer.error = "cache flush: " + f.error().message;
            return;
        }
        auto t = call();
        if (!t) {
            peer.error = t.error().message;
            return;
        }
        samples.push_back(*t);
    }
    const Summary s = summarize(samples);
    peer.seconds = s.median;
    peer.seconds_min = s.min;
    peer.seconds_max = s.max;
}

}  // namespace kevo
