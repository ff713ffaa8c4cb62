// The float <-> narrow-type conversions (see dtypes.hpp). bf16 is a bit operation on the float;
// half and fp8 go through one exact minifloat rounding in double (every step is a power-of-two
// scaling or an integer rounding, so nothing is rounded twice).
#include "core/dtypes.hpp"

#include <bit>
#include <cassert>
#include <cmath>

namespace kevo {
namespace {

// A binary floating-point format with an implicit leading one, subnormals and a biased exponent.
struct Minifloat {
    int mantissa_bits;
    int bias;
    int max_exponent;   // of the largest finite value (unbiased)
    uint32_t max_mantissa;  // mantissa field of the largest finite value
    uint32_t nan_bits;  // the encoding produced for NaN (sign added separately)
    bool has_infinity;

    int min_exponent() const { return 1 - bias; }
    double max_value() const {
        return std::ldexp(1.0 + static_cast<double>(max_mantissa) / (1u << mantissa_bits), max_exponent);
    }
    uint32_t sign_bit() const { return 1u << (mantissa_bits + exponent_bits()); }
    int exponent_bits() const { return std::bit_width(static_cast<unsigned>(2 * bias + 1)); }
};

constexpr Minifloat kHalf{10, 15, 15, 0x3ff, 0x7e00, true};
constexpr Minifloat kE4m3{3, 7, 8, 0x6, 0x7f, false};

// Rounds |value| to the format (nearest, ties to even) and encodes it; overflow gives infinity
// where the format has one, otherwise NaN or the largest value as `saturate` says.
uint32_t encode(const Minifloat& f, float value, bool saturate) {
    const uint32_t sign = std::signbit(value) ? f.sign_bit() : 0;
    if (std::isnan(value)) return sign | f.nan_bits;
    const double a = std::fabs(static_cast<double>(value));
    const uint32_t inf_bits = static_cast<uint32_t>(f.max_exponent + f.bias + 1) << f.mantissa_bits;
    const auto overflow = [&] {
        if (f.has_infinity && !saturate) return sign | inf_bits;
        if (saturate) return sign | (static_cast<uint32_t>(f.max_exponent + f.bias) << f.mantissa_bits) | f.max_mantissa;
        return sign | f.nan_bits;
    };
    if (std::isinf(value)) return overflow();
    if (a == 0) return sign;
    int e = std::ilogb(a);
    if (e < f.min_exponent()) e = f.min_exponent();  // subnormal: the spacing stops shrinking
    const double quantum = std::ldexp(1.0, e - f.mantissa_bits);
    const double rounded = std::nearbyint(a / quantum) * quantum;  // the default mode rounds ties to even
    if (rounded > f.max_value()) return overflow();
    if (rounded == 0) return sign;
    if (rounded < std::ldexp(1.0, f.min_exponent()))
        return sign | static_cast<uint32_t>(rounded / std::ldexp(1.0, f.min_exponent() - f.mantissa_bits));
    const int re = std::ilogb(rounded);
    const auto mantissa = static_cast<uint32_t>(rounded / std::ldexp(1.0, re - f.mantissa_bits)) - (1u << f.mantissa_bits);
    return sign | (static_cast<uint32_t>(re + f.bias) << f.mantissa_bits) | mantissa;
}

float decode(const Minifloat& f, uint32_t bits) {
    const bool negative = (bits & f.sign_bit()) != 0;
    const uint32_t exponent_field = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits()) - 1);
    const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1);
    const uint32_t top_field = (1u << f.exponent_bits()) - 1;
    double magnitude;
    if (f.has_infinity && exponent_field == top_field)
        magnitude = mantissa == 0 ? HUGE_VAL : std::nan("");
    else if (!f.has_infinity && exponent_field == top_field && mantissa > f.max_mantissa)
        magnitude = std::nan("");
    else if (exponent_field == 0)
        magnitude = std::ldexp(static_cast<double>(mantissa), f.min_exponent() - f.mantissa_bits);
    else
        magnitude = std::ldexp(1.0 + static_cast<double>(mantissa) / (1u << f.mantissa_bits),
                               static_cast<int>(exponent_field) - f.bias);
    return static_cast<float>(negative ? -magnitude : magnitude);
}

}  // namespace

uint16_t float_to_bf16(float value) {
    const uint32_t u = std::bit_cast<uint32_t>(value);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
    // Adding 0x7fff plus the lowest kept bit carries into the kept half exactly when the dropped
    // half is above one half, or is one half and the kept half is odd.
    const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(rounded >> 16);
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float round_to_bf16(float value) { return bf16_to_float(float_to_bf16(value)); }

uint16_t float_to_f16(float value) { return static_cast<uint16_t>(encode(kHalf, value, false)); }

float f16_to_float(uint16_t bits) { return decode(kHalf, bits); }

uint8_t float_to_e4m3(float value, Fp8Overflow overflow) {
    return static_cast<uint8_t>(encode(kE4m3, value, overflow == Fp8Overflow::saturate));
}

float e4m3_to_float(uint8_t bits) { return decode(kE4m3, bits); }

int8_t float_to_i8(float value) {
    if (std::isnan(value)) return 0;
    const float r = std::nearbyint(value);
    if (r >= 127.0f) return 127;
    if (r <= -128.0f) return -128;
    return static_cast<int8_t>(r);
}

std::vector<uint8_t> pack_i4(std::span<const int8_t> values) {
    std::vector<uint8_t> packed((values.size() + 1) / 2, 0);
    for (size_t i = 0; i < values.size(); ++i) {
        assert(values[i] >= -8 && values[i] <= 7);
        const auto nibble = static_cast<uint8_t>(values[i] & 0x0f);
        packed[i / 2] |= static_cast<uint8_t>(i % 2 == 0 ? nibble : nibble << 4);
    }
    return packed;
}

int8_t unpack_i4(std::span<const uint8_t> packed, size_t index) {
    assert(index / 2 < packed.size());
    const uint8_t nibble = index % 2 == 0 ? packed[index / 2] & 0x0f : packed[index / 2] >> 4;
    return static_cast<int8_t>(nibble >= 8 ? static_cast<int>(nibble) - 16 : nibble);
}

double bf16_ulp(double value) {
    const double a = std::fabs(value);
    if (!(a >= 0x1.0p-126)) return 0x1.0p-133;  // subnormal, zero (and NaN)
    return std::ldexp(1.0, std::ilogb(a) - 7);
}

}  // namespace kevo
