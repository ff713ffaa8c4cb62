// FNV-1a with a splitmix finaliser; see hash.hpp.
#include "core/hash.hpp"

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"

#include <algorithm>
#include <vector>

namespace kevo {

uint64_t hash_bytes(const void* data, size_t bytes, uint64_t seed) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = 0xCBF29CE484222325ull ^ seed;
    // Eight bytes at a time keeps checksums of multi-gigabyte inputs cheap.
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t word;
        __builtin_memcpy(&word, p + i, 8);
        h = (h ^ word) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
    return rng::splitmix64(h);
}

uint64_t hash_bytes_parallel(const void* data, size_t bytes) {
    constexpr size_t kChunk = 1 << 20;
    const size_t chunks = (bytes + kChunk - 1) / kChunk;
    std::vector<uint64_t> partial(chunks);
    const auto* p = static_cast<const unsigned char*>(data);
    parallel_for(chunks, [&](size_t begin, size_t end) {
        for (size_t c = begin; c < end; ++c) partial[c] = hash_bytes(p + c * kChunk, std::min(kChunk, bytes - c * kChunk), c);
    }, 4);
    return hash_bytes(partial.data(), partial.size() * sizeof(uint64_t), bytes);
}

uint64_t hash64(std::string_view data, uint64_t seed) { return hash_bytes(data.data(), data.size(), seed); }

std::string hex64(uint64_t value) { return fmt::format("{:016x}", value); }

}  // namespace kevo
