// The project's own seeded generator: counter-based, so a value depends only on (seed, stream,
// index) and inputs are identical on every machine and for any number of threads.
#pragma once

#include <cstdint>
#include <span>

namespace kevo::rng {

// Murmur3's 32-bit finaliser; also the RNG that hmc and ising kernels must reproduce exactly.
inline constexpr uint32_t fmix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

inline constexpr uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// 64 random bits for element `index` of stream `stream` under `seed`.
inline constexpr uint64_t bits(uint64_t seed, uint64_t stream, uint64_t index) {
    return splitmix64(splitmix64(seed ^ splitmix64(stream)) + index * 0xD1B54A32D192ED03ull);
}

// Uniform in [0, 1) with 53 random bits.
inline double uniform(uint64_t seed, uint64_t stream, uint64_t index) {
    return static_cast<double>(bits(seed, stream, index) >> 11) * 0x1.0p-53;
}

// Standard normal by Box-Muller on two uniforms of the same counter.
double normal(uint64_t seed, uint64_t stream, uint64_t index);

// Parallel fills; element i of `out` is a function of (seed, stream, i) alone.
void fill_uniform(std::span<float> out, uint64_t seed, uint64_t stream, float lo, float hi);
void fill_normal(std::span<float> out, uint64_t seed, uint64_t stream, float mean, float stddev);

// A fresh 64-bit seed from the operating system.
uint64_t fresh_seed();

}  // namespace kevo::rng
