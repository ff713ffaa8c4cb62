// Tests of the host-side dtype conversions (src/core/dtypes.hpp): every bf16, half and fp8
// pattern round-trips, rounding is to nearest with ties to even (checked against an independent
// nearest-neighbour search and, for half, the compiler's own _Float16), and the fp8, int8 and int4
// limits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dtypes.hpp"

namespace kevo {
namespace {

TEST(Dtypes, EveryBf16PatternRoundTrips) {
    for (uint32_t b = 0; b <= 0xffff; ++b) {
        const float f = bf16_to_float(static_cast<uint16_t>(b));
        const uint16_t back = float_to_bf16(f);
        if (std::isnan(f)) EXPECT_TRUE(std::isnan(bf16_to_float(back))) << std::hex << b;
        else EXPECT_EQ(back, b) << std::hex << b;
    }
}

// The bf16 nearest to f found by comparing the two neighbours in double; ties to the even one.
uint16_t nearest_bf16(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    const auto lo = static_cast<uint16_t>(u >> 16), hi = static_cast<uint16_t>(lo + 1);
    const double dl = std::fabs(static_cast<double>(f) - bf16_to_float(lo));
    const double dh = std::fabs(static_cast<double>(f) - bf16_to_float(hi));
    if (dl != dh) return dl < dh ? lo : hi;
    return (lo & 1) == 0 ? lo : hi;
}

TEST(Dtypes, Bf16RoundsToNearestEvenOnASweepOfFloats) {
    // Every 4099th float (a stride prime to 2^16, so every low half-word occurs), finite ones only.
    for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) {
        const float f = std::bit_cast<float>(static_cast<uint32_t>(u));
        if (!std::isfinite(f) || std::fabs(f) > 3.38e38f) continue;
        ASSERT_EQ(float_to_bf16(f), nearest_bf16(f)) << std::hex << u;
    }
    // Ties by hand: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (odd) and goes to 1; 1 + 3*2^-8 is
    // halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even) and goes up.
    EXPECT_EQ(round_to_bf16(1.0f + 0x1.0p-8f), 1.0f);
    EXPECT_EQ(round_to_bf16(1.0f + 3 * 0x1.0p-8f), 1.0f + 0x1.0p-6f);
    EXPECT_EQ(round_to_bf16(-(1.0f + 3 * 0x1.0p-8f)), -(1.0f + 0x1.0p-6f));
    EXPECT_TRUE(std::isinf(round_to_bf16(std::numeric_limits<float>::max())));
    EXPECT_TRUE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
    EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7f800001u)) & 0x7fc0, 0x7fc0) << "a signalling NaN comes back quiet";
}

TEST(Dtypes, EveryHalfPatternRoundTrips) {
    for (uint32_t b = 0; b <= 0xffff; ++b) {
        const float f = f16_to_float(static_cast<uint16_t>(b));
        const uint16_t back = float_to_f16(f);
        if (std::isnan(f)) EXPECT_TRUE(std::isnan(f16_to_float(back))) << std::hex << b;
        else EXPECT_EQ(back, b) << std::hex << b;
    }
    EXPECT_EQ(f16_to_float(0x3c00), 1.0f);
    EXPECT_EQ(f16_to_float(0x7bff), 65504.0f);
    EXPECT_EQ(f16_to_float(0x0001), 0x1.0p-24f);
    EXPECT_TRUE(std::isinf(f16_to_float(0x7c00)));
}

TEST(Dtypes, HalfRoundsLikeTheCompilersFloat16) {
#if defined(__FLT16_MAX__)
    for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) {
        const float f = std::bit_cast<float>(static_cast<uint32_t>(u));
        if (std::isnan(f)) continue;
        const auto want = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
        ASSERT_EQ(float_to_f16(f), want) << std::hex << u << " " << f;
    }
#else
    GTEST_SKIP() << "this compiler has no _Float16";
#endif
    // Ties by hand: 1 + 2^-11 goes to 1 (even), 65520 (halfway past 65504, odd) to infinity.
    EXPECT_EQ(float_to_f16(1.0f + 0x1.0p-11f), 0x3c00);
    EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);
    EXPECT_EQ(float_to_f16(65519.0f), 0x7bff);
}

TEST(Dtypes, EveryE4m3PatternRoundTripsAndNaNIsOnlyS1111111) {
    int nans = 0;
    for (uint32_t b = 0; b <= 0xff; ++b) {
        const float f = e4m3_to_float(static_cast<uint8_t>(b));
        if (std::isnan(f)) {
            ++nans;
            EXPECT_EQ(b & 0x7f, 0x7fu) << std::hex << b;
            continue;
        }
        EXPECT_FALSE(std::isinf(f)) << std::hex << b;
        EXPECT_EQ(float_to_e4m3(f), b) << std::hex << b << " " << f;
        EXPECT_EQ(float_to_e4m3(f, Fp8Overflow::nan), b) << std::hex << b << " " << f;
    }
    EXPECT_EQ(nans, 2);
    EXPECT_EQ(e4m3_to_float(0x7e), kE4m3Max);
    EXPECT_EQ(e4m3_to_float(0x08), 0x1.0p-6f);  // smallest normal
    EXPECT_EQ(e4m3_to_float(0x01), 0x1.0p-9f);  // smallest subnormal
    EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
}

TEST(Dtypes, E4m3RoundsTiesToEvenAndSaturatesOrGivesNaN) {
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(1.0f + 1.0f / 16)), 1.0f);           // halfway 1 | 1.125: even is 1
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(1.125f + 1.0f / 16)), 1.25f);        // halfway 1.125 | 1.25: even is 1.25
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(0x1.0p-10f)), 0.0f);                 // half the smallest subnormal: to 0
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(0x1.8p-10f)), 0x1.0p-9f);
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(464.0f)), 448.0f);                   // halfway 448 | (480): even is 448
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(464.0f, Fp8Overflow::nan)), 448.0f);
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(465.0f)), 448.0f);
    EXPECT_TRUE(std::isnan(e4m3_to_float(float_to_e4m3(465.0f, Fp8Overflow::nan))));
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(-1e9f)), -448.0f);
    EXPECT_EQ(e4m3_to_float(float_to_e4m3(std::numeric_limits<float>::infinity())), 448.0f);
    EXPECT_TRUE(std::isnan(e4m3_to_float(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()))));
    EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
}

TEST(Dtypes, Int8RoundsTiesToEvenAndSaturates) {
    EXPECT_EQ(float_to_i8(2.5f), 2);
    EXPECT_EQ(float_to_i8(3.5f), 4);
    EXPECT_EQ(float_to_i8(-2.5f), -2);
    EXPECT_EQ(float_to_i8(126.6f), 127);
    EXPECT_EQ(float_to_i8(200.0f), 127);
    EXPECT_EQ(float_to_i8(-200.0f), -128);
    EXPECT_EQ(float_to_i8(std::numeric_limits<float>::quiet_NaN()), 0);
}

TEST(Dtypes, Int4PacksLowNibbleFirst) {
    const std::vector<int8_t> values = {1, -8, 7, -1, 3};
    const auto packed = pack_i4(values);
    ASSERT_EQ(packed.size(), 3u);
    EXPECT_EQ(packed[0], 0x81);
    EXPECT_EQ(packed[1], 0xf7);
    EXPECT_EQ(packed[2], 0x03);
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(unpack_i4(packed, i), values[i]) << i;
    std::vector<int8_t> all;
    for (int v = -8; v <= 7; ++v) all.push_back(static_cast<int8_t>(v));
    const auto packed_all = pack_i4(all);
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(unpack_i4(packed_all, i), all[i]) << i;
}

TEST(Dtypes, Bf16UlpIsTheSpacingAtTheValue) {
    EXPECT_EQ(bf16_ulp(1.0), 0x1.0p-7);
    EXPECT_EQ(bf16_ulp(1.99), 0x1.0p-7);
    EXPECT_EQ(bf16_ulp(-2.0), 0x1.0p-6);
    EXPECT_EQ(bf16_ulp(0.0), 0x1.0p-133);
    // The spacing is the distance to the next bf16 up, everywhere in the normal range.
    for (uint32_t b = 0x0080; b < 0x7f7f; b += 97)
        EXPECT_EQ(bf16_ulp(bf16_to_float(static_cast<uint16_t>(b))),
                  static_cast<double>(bf16_to_float(static_cast<uint16_t>(b + 1))) - bf16_to_float(static_cast<uint16_t>(b)))
            << std::hex << b;
}

}  // namespace
}  // namespace kevo
