// Tests of the ML pack's check modes (src/task/checks.hpp: bf16 ulps beyond the output's own
// rounding, bit-exact, the quantisation triple, narrow-type decoding) and of the outlier recipes
// (src/task/outliers.hpp). Each check is shown on both sides: a right result passes with margin, a
// subtly wrong one fails, and the reported error and tolerance say by how much.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "core/dtypes.hpp"
#include "core/rng.hpp"
#include "eval/device_case.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"

namespace kevo {
namespace {

std::vector<float> normal_values(size_t n, uint64_t seed, float stddev = 1.0f) {
    std::vector<float> v(n);
    rng::fill_normal(v, seed, 1, 0.0f, stddev);
    return v;
}

std::vector<uint16_t> to_bf16(const std::vector<double>& exact) {
    std::vector<uint16_t> out;
    for (double v : exact) out.push_back(float_to_bf16(static_cast<float>(v)));
    return out;
}

// ---------------------------------------------------------------------------------------------
// bf16 per element

TEST(MlChecks, CorrectlyRoundedBf16PassesWithLargeMarginAndDoubleRoundingFails) {
    // out = a * b with a, b ~ N(0, 1): the exact product rounded once, and the same with a rounded
    // to bf16 first (the silu_and_mul double rounding).
    const auto a = normal_values(20000, 1), b = normal_values(20000, 2);
    std::vector<double> exact;
    std::vector<float> want;
    for (size_t i = 0; i < a.size(); ++i) {
        const double bb = round_to_bf16(b[i]);
        exact.push_back(static_cast<double>(a[i]) * bb);
        want.push_back(static_cast<float>(exact.back()));
    }
    std::vector<double> fp32, twice;
    for (size_t i = 0; i < a.size(); ++i) {
        const float bb = round_to_bf16(b[i]);
        fp32.push_back(a[i] * bb);
        twice.push_back(static_cast<double>(round_to_bf16(a[i])) * bb);
    }
    const Bf16Tolerance tol{0.5, 0};
    const auto good = check_bf16_per_element(to_bf16(fp32), want, tol, constant_scale(0), 0.5);
    EXPECT_TRUE(good.pass) << good.message;
    EXPECT_EQ(good.kind, "bf16_ulp");
    EXPECT_GT(good.tolerance, 50 * good.error) << good.message;  // fp32 error is ~1e-4 ulp
    const auto bad = check_bf16_per_element(to_bf16(twice), want, tol, constant_scale(0), 0.5);
    EXPECT_FALSE(bad.pass) << bad.message;
    EXPECT_GT(bad.error, bad.tolerance);
    EXPECT_NE(bad.message.find("beyond the output's own rounding"), std::string::npos) << bad.message;
}

TEST(MlChecks, Bf16ScaleFloorAcceptsCancellationAndAnOffsetFails) {
    // want = 1 - (1 - 2^-20): a tiny result of two unit terms; fp32 gets it to ~1e-7 of the terms.
    const std::vector<float> want = {0x1.0p-20f, 1.0f};
    const std::vector<uint16_t> got = {float_to_bf16(0x1.0p-20f + 6e-8f), float_to_bf16(1.0f)};
    const ElementScale terms = [](size_t) { return 2.0; };
    EXPECT_FALSE(check_bf16_per_element(got, want, {0.5, 0}, terms, 0.5).pass) << "no floor: a cancellation fails";
    const auto floored = check_bf16_per_element(got, want, {0.5, 2e-5}, terms, 0.5);
    EXPECT_TRUE(floored.pass) << floored.message;
    EXPECT_GT(floored.tolerance, 50 * floored.error);
    const std::vector<uint16_t> offset = {float_to_bf16(0x1.0p-20f + 1e-3f), float_to_bf16(1.0f)};
    const auto r = check_bf16_per_element(offset, want, {0.5, 2e-5}, terms, 0.5);
    EXPECT_FALSE(r.pass) << r.message;
    EXPECT_EQ(r.worst_index, 0);
}

TEST(MlChecks, Bf16PoisonAndInfinityFailAsNonFinite) {
    const std::vector<float> want = {1.0f, 2.0f, 3.0f};
    const std::vector<uint16_t> poisoned = {float_to_bf16(1.0f), 0xffff, float_to_bf16(3.0f)};
    const auto r = check_bf16_per_element(poisoned, want, {0.5, 0}, constant_scale(0), 0.5);
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.kind, "nan");
    EXPECT_EQ(r.worst_index, 1);
    const std::vector<uint16_t> inf = {float_to_bf16(1.0f), float_to_bf16(2.0f), 0x7f80};
    EXPECT_EQ(check_bf16_per_element(inf, want, {0.5, 0}, constant_scale(0), 0.5).kind, "nan");
}

TEST(MlChecks, Bf16ReferenceValuesTellExactFromDeviceReferences) {
    const std::vector<float> exact = {1.0f + 0x1.0p-9f, -2.5f};
    const auto from_cpu = bf16_reference_values(to_bytes(exact), 2);
    EXPECT_EQ(from_cpu.own_rounding, 0.5);
    EXPECT_EQ(from_cpu.values, exact);
    const auto device = make_bf16_buffer("ref", BufferRole::output, exact);
    const auto from_device = bf16_reference_values(device.data, 2);
    EXPECT_EQ(from_device.own_rounding, 1.0);
    EXPECT_EQ(from_device.values, (std::vector<float>{1.0f, -2.5f}));
    // Against a rounded reference, a result one ulp away (each side rounded its own way) passes.
    const std::vector<uint16_t> got = {float_to_bf16(1.0f + 0x1.0p-7f), float_to_bf16(-2.5f)};
    EXPECT_TRUE(check_bf16_per_element(got, from_device.values, {0.5, 0}, constant_scale(0), from_device.own_rounding).pass);
}

// ---------------------------------------------------------------------------------------------
// bit-exact

TEST(MlChecks, BitExactCountsDifferingElementsAndNamesTheFirst) {
    std::vector<std::byte> want(64, std::byte{7}), got = want;
    EXPECT_TRUE(check_bit_exact(got, want, 2).pass);
    got[21] = std::byte{8};  // element 10
    got[40] = std::byte{0};  // element 20
    const auto r = check_bit_exact(got, want, 2);
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.kind, "bit_exact");
    EXPECT_EQ(r.error, 2);
    EXPECT_EQ(r.tolerance, 0);
    EXPECT_EQ(r.worst_index, 10);
    EXPECT_NE(r.message.find("2 of 32 elements differ; the first at [10]"), std::string::npos) << r.message;
    EXPECT_EQ(check_bit_exact(std::vector<std::byte>(62), want, 2).kind, "size");
}

// ---------------------------------------------------------------------------------------------
// the quantisation triple

// A W8A8-style result: int8 operands with per-row scales, exact; the candidate's differ by what
// fp32 accumulation gives (right) or by a 1% scale error (subtly wrong).
TEST(MlChecks, QuantTriplePassesFp32RoundingAndRejectsAOnePercentScaleError) {
    const auto want = normal_values(50000, 3, 4.0f);
    std::vector<float> rounded(want.size()), scaled(want.size()), bf16(want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        rounded[i] = want[i] * (1.0f + 1e-7f * static_cast<float>(static_cast<int>(i % 7) - 3));
        scaled[i] = want[i] * 1.01f;
        bf16[i] = round_to_bf16(want[i]);
    }
    // Thresholds for a task whose operands are given (the reference is exact up to bf16 output).
    const QuantThresholds tight{0.99999, 5e-3, 5e-3};
    const auto good = check_quant_triple(rounded, want, tight);
    EXPECT_TRUE(good.pass) << good.message;
    EXPECT_GT(good.tolerance, 50 * good.error) << good.message;
    const auto output_rounding = check_quant_triple(bf16, want, tight);
    EXPECT_TRUE(output_rounding.pass) << output_rounding.message;
    const auto bad = check_quant_triple(scaled, want, tight);
    EXPECT_FALSE(bad.pass) << bad.message;
    EXPECT_TRUE(bad.kind == "rel_l1" || bad.kind == "rmse") << bad.kind;  // a scale keeps the cosine at 1
    EXPECT_NEAR(bad.error, 0.01, 1e-4);
    // KernelBench-X's thresholds let the same 1% error through.
    EXPECT_TRUE(check_quant_triple(scaled, want, {0.95, 0.05, 0.1}).pass);
}

TEST(MlChecks, QuantTripleCosineBindsOnNoiseAndNonFiniteFails) {
    const auto want = normal_values(10000, 4), noise = normal_values(10000, 5);
    std::vector<float> noisy(want.size());
    for (size_t i = 0; i < want.size(); ++i) noisy[i] = want[i] + 0.5f * noise[i];
    const auto r = check_quant_triple(noisy, want, {0.99, 1.0, 1.0});
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.kind, "cosine");
    EXPECT_NEAR(r.tolerance, 0.01, 1e-12);
    EXPECT_GT(r.error, 0.05);
    noisy[77] = std::numeric_limits<float>::quiet_NaN();
    const auto nan = check_quant_triple(noisy, want, {0, 10, 10});
    EXPECT_FALSE(nan.pass);
    EXPECT_EQ(nan.kind, "nan");
    EXPECT_EQ(nan.worst_index, 77);
}

// ---------------------------------------------------------------------------------------------
// decoding

TEST(MlChecks, DecodeFloatsUnderstandsEachTypesNaNAndPoison) {
    // The evaluator's poison for an output of each float type decodes as NaN, so an element a
    // kernel never wrote fails the non-finite check.
    for (ElemType type : {ElemType::f32, ElemType::f16, ElemType::bf16, ElemType::f8e4m3}) {
        const std::vector<std::byte> poison(4 * elem_size(type), poison_byte(type));
        const auto values = decode_floats(type, poison);
        ASSERT_EQ(values.size(), 4u) << elem_type_name(type);
        for (float v : values) EXPECT_TRUE(std::isnan(v)) << elem_type_name(type);
    }
    const uint16_t half_one = 0x3c00, bf16_one = 0x3f80;
    std::vector<std::byte> bytes(2);
    std::memcpy(bytes.data(), &half_one, 2);
    EXPECT_EQ(decode_floats(ElemType::f16, bytes)[0], 1.0f);
    std::memcpy(bytes.data(), &bf16_one, 2);
    EXPECT_EQ(decode_floats(ElemType::bf16, bytes)[0], 1.0f);
    EXPECT_EQ(decode_floats(ElemType::f8e4m3, {std::byte{0x7e}})[0], 448.0f);
    EXPECT_EQ(poison_byte(ElemType::i4x2), std::byte{0x7f});
    EXPECT_EQ(poison_byte(ElemType::i8), std::byte{0x7f});
}

TEST(MlChecks, ElementTypesHaveSizesAndNames) {
    EXPECT_EQ(elem_size(ElemType::bf16), 2u);
    EXPECT_EQ(elem_size(ElemType::f16), 2u);
    EXPECT_EQ(elem_size(ElemType::f8e4m3), 1u);
    EXPECT_EQ(elem_size(ElemType::i4x2), 1u);
    EXPECT_EQ(elem_size(ElemType::i32), 4u);
    EXPECT_STREQ(elem_type_name(ElemType::i4x2), "i4x2");
}

// ---------------------------------------------------------------------------------------------
// outlier recipes

TEST(Outliers, SpikesFollowTheProbabilityAndTheClamp) {
    std::vector<float> data(200000, 0.0f);
    const size_t planted = outliers::plant_spikes(data, {0.01, 10, 10}, 7, 1);
    EXPECT_NEAR(static_cast<double>(planted), 2000.0, 200.0);  // ~4.5 sigma
    size_t nonzero = 0;
    float largest = 0;
    for (float v : data) {
        nonzero += v != 0;
        largest = std::max(largest, std::fabs(v));
    }
    EXPECT_EQ(nonzero, planted);
    EXPECT_EQ(largest, 10.0f) << "randn * 10 exceeds 10 often; the clamp holds it there";
    std::vector<float> again(200000, 0.0f);
    outliers::plant_spikes(again, {0.01, 10, 10}, 7, 1);
    EXPECT_EQ(again, data) << "deterministic in (seed, stream)";
}

TEST(Outliers, MassiveChannelsAreWholeColumns) {
    std::vector<float> data(64 * 32, 1.0f);
    const auto channels = outliers::plant_massive_channels(data, 64, 32, 3, 500, 1, 2);
    ASSERT_EQ(channels.size(), 3u);
    for (size_t r = 0; r < 64; ++r)
        for (size_t c = 0; c < 32; ++c)
            EXPECT_EQ(data[r * 32 + c], std::count(channels.begin(), channels.end(), c) ? 500.0f : 1.0f);
}

TEST(Outliers, TiesRepeatTheMaximumAndNegInfNeverFillsARow) {
    auto data = normal_values(8 * 50, 9);
    const std::vector<size_t> rows = {2, 5};
    outliers::plant_ties_and_neg_inf(data, 50, rows, 3, 10, 9, 3);
    for (size_t r : rows) {
        const auto row = std::span(data).subspan(r * 50, 50);
        const float top = *std::max_element(row.begin(), row.end());
        EXPECT_EQ(std::count(row.begin(), row.end(), top), 4) << r;
        EXPECT_EQ(std::count(row.begin(), row.end(), -std::numeric_limits<float>::infinity()), 10) << r;
    }
    const auto untouched = std::span(data).subspan(0, 50);
    EXPECT_EQ(std::count_if(untouched.begin(), untouched.end(), [](float v) { return std::isinf(v); }), 0);
}

TEST(Outliers, SkewedRoutingLeavesExpertsEmptyAndFavoursTheFirstRanks) {
    const size_t tokens = 4000, experts = 64, k = 8, used = 40;
    const auto ids = outliers::skewed_routing(tokens, experts, k, used, 1.2, 11, 4);
    ASSERT_EQ(ids.size(), tokens * k);
    std::map<int32_t, size_t> load;
    for (size_t t = 0; t < tokens; ++t) {
        std::set<int32_t> distinct(ids.begin() + static_cast<std::ptrdiff_t>(t * k), ids.begin() + static_cast<std::ptrdiff_t>((t + 1) * k));
        EXPECT_EQ(distinct.size(), k) << "token " << t;
        for (int32_t e : distinct) {
            EXPECT_GE(e, 0);
            EXPECT_LT(e, static_cast<int32_t>(experts));
            ++load[e];
        }
    }
    EXPECT_EQ(load.size(), used) << "experts beyond `used` get no token";
    size_t busiest = 0, quietest = tokens;
    for (const auto& [e, n] : load) busiest = std::max(busiest, n), quietest = std::min(quietest, n);
    EXPECT_GT(busiest, 4 * quietest) << "the load is skewed";
}

TEST(Outliers, SaturationHitsTheEndsOfTheSymmetricRanges) {
    std::vector<int8_t> q8(10000, 3), q4(10000, 3);
    const size_t n8 = outliers::saturate_int8(q8, 0.05, 1, 5), n4 = outliers::saturate_int4(q4, 0.05, 1, 6);
    EXPECT_NEAR(static_cast<double>(n8), 500.0, 100.0);
    EXPECT_EQ(static_cast<size_t>(std::count(q8.begin(), q8.end(), 127) + std::count(q8.begin(), q8.end(), -127)), n8);
    EXPECT_EQ(static_cast<size_t>(std::count(q4.begin(), q4.end(), -8) + std::count(q4.begin(), q4.end(), 7)), n4);
    EXPECT_GT(std::count(q4.begin(), q4.end(), -8), 0);
}

TEST(Outliers, PickDistinctIsDistinctInRangeAndCoversSmallRanges) {
    const auto few = outliers::pick_distinct(1000000, 500, 3, 7);
    EXPECT_EQ(std::set<size_t>(few.begin(), few.end()).size(), 500u);
    EXPECT_TRUE(std::is_sorted(few.begin(), few.end()));
    EXPECT_LT(few.back(), 1000000u);
    const auto all = outliers::pick_distinct(20, 20, 3, 7);
    for (size_t i = 0; i < 20; ++i) EXPECT_EQ(all[i], i);
}

}  // namespace
}  // namespace kevo
