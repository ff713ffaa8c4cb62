// Counter-based random numbers for task inputs (see rng.hpp).
#include "core/rng.hpp"

#include <cmath>
#include <random>

#include "core/parallel.hpp"

namespace kevo::rng {

double normal(uint64_t seed, uint64_t stream, uint64_t index) {
    const uint64_t b = bits(seed, stream, index);
    // Two 26-bit uniforms from one draw keep the cost to a single mix per value.
    const double u1 = (static_cast<double>(b >> 38) + 0.5) * 0x1.0p-26;
    const double u2 = static_cast<double>((b >> 12) & 0x3FFFFFFull) * 0x1.0p-26;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

void fill_uniform(std::span<float> out, uint64_t seed, uint64_t stream, float lo, float hi) {
    parallel_for(out.size(), [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i)
            out[i] = static_cast<float>(lo + (hi - lo) * uniform(seed, stream, i));
    });
}

void fill_normal(std::span<float> out, uint64_t seed, uint64_t stream, float mean, float stddev) {
    parallel_for(out.size(), [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i)
            out[i] = static_cast<float>(mean + stddev * normal(seed, stream, i));
    });
}

uint64_t fresh_seed() {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace kevo::rng
