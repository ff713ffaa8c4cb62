// Tests of the ML pack's gemm_bf16 and gemm_w8a8: specs and sizes (shapes, held-out, device
// references, the roofline's W and Q), references against hand computations, the checks on
// host-simulated kernels on both sides (fp32 in order, split-K, pairwise and truncating-accumulator
// variants pass with margin; truncated stores, bf16 accumulators, fp8 operands, dropped K tiles,
// wrong scales and uint8 operands fail), the device-reference path, and the real seeds, best-known
// and wrong kernels through PoCL.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>

#include "core/dtypes.hpp"
#include "kevo_process.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"
#include "ml_candidates.hpp"

namespace kevo {
namespace {

std::unique_ptr<Task> load(const std::string& name) {
    auto task = make_task(name);
    EXPECT_TRUE(task.has_value()) << name;
    return std::move(task.value());
}

struct Mnk {
    size_t m, n, k;
};
Mnk mnk(const SizeSpec& s) {
    return {static_cast<size_t>(s.param("M")), static_cast<size_t>(s.param("N")), static_cast<size_t>(s.param("K"))};
}

std::vector<std::byte> bytes_of_words(const std::vector<uint16_t>& w) {
    std::vector<std::byte> out(w.size() * 2);
    std::memcpy(out.data(), w.data(), out.size());
    return out;
}

// ---------------------------------------------------------------------------------------------
// specs

TEST(MlGemmSpec, PackCategoryOrderSizesAndRoofline) {
    for (const auto& [name, order] : std::vector<std::pair<std::string, int>>{{"gemm_bf16", 110}, {"gemm_w8a8", 111}}) {
        auto task = load(name);
        const auto& spec = task->spec();
        EXPECT_EQ(spec.pack, "ml");
        EXPECT_EQ(spec.category, "gemm");
        EXPECT_EQ(spec.order, order);
        EXPECT_EQ(spec.bound, Bound::compute);
        for (const char* profile : {"small", "paper", "large"}) {
            const auto& sizes = spec.profiles.at(profile);
            ASSERT_EQ(sizes.size(), 4u) << name << " " << profile;
            int heldout = 0;
            for (const auto& s : sizes) {
                heldout += s.heldout;
                const Mnk d = mnk(s);
                // The contract the brief states and the best kernels rely on.
                EXPECT_EQ(d.k % 64, 0u) << name << " " << s.label;
                EXPECT_EQ(d.n % 128, 0u) << name << " " << s.label;
                const double macs = static_cast<double>(d.m) * d.n * d.k;
                EXPECT_EQ(s.device_reference, macs > (name == "gemm_bf16" ? 1.5e9 : 2e9)) << name << " " << s.label;
                if (std::string(profile) == "small") EXPECT_LE(macs, 1e7) << name << " " << s.label << ": PoCL";
            }
            EXPECT_EQ(heldout, 1) << name << " " << profile;
        }
        EXPECT_EQ(spec.profiles.at("large").back().param("K"), 18432);  // DeepSeek-V3 dense down, held out
    }
    auto bf16 = load("gemm_bf16");
    const Case c = bf16->make_case({"t", false, {{"M", 3}, {"N", 128}, {"K", 64}}}, 1, Trial::nominal);
    EXPECT_DOUBLE_EQ(c.flops_by_class.at(ComputeClass::tensor_bf16), 2.0 * 3 * 128 * 64);
    EXPECT_DOUBLE_EQ(c.roofline_bytes, 2.0 * (3 * 64 + 128 * 64 + 3 * 128));
    EXPECT_EQ(c.launches[0].domain, (Dim3{128, 3, 1}));
    auto w8 = load("gemm_w8a8");
    const Case q = w8->make_case({"t", false, {{"M", 3}, {"N", 128}, {"K", 64}}}, 1, Trial::nominal);
    EXPECT_DOUBLE_EQ(q.flops_by_class.at(ComputeClass::tensor_int8), 2.0 * 3 * 128 * 64);
    EXPECT_DOUBLE_EQ(q.roofline_bytes, 3 * 64 + 128 * 64 + 4.0 * (3 + 128) + 2.0 * 3 * 128);
    EXPECT_EQ(q.buffers[0].type, ElemType::i8);
    EXPECT_EQ(q.buffers[1].type, ElemType::f32);
    EXPECT_EQ(q.buffers[4].type, ElemType::bf16);
    EXPECT_EQ(q.results, (std::vector<int>{4}));
}

// ---------------------------------------------------------------------------------------------
// references by hand

TEST(MlGemmBf16, ReferenceIsTheExactProductAndItsAbsoluteSum) {
    auto task = load("gemm_bf16");
    const SizeSpec s{"t", false, {{"M", 2}, {"N", 2}, {"K", 3}}};
    Case c = task->make_case(s, 1, Trial::nominal);
    // A = [[1, 2, -3], [0.5, 0, 1]], B = [[1, 1, 1], [2, -1, 0.25]]
    c.buffers[0] = make_bf16_buffer("a", BufferRole::input, std::vector<float>{1, 2, -3, 0.5f, 0, 1});
    c.buffers[1] = make_bf16_buffer("b", BufferRole::input, std::vector<float>{1, 1, 1, 2, -1, 0.25f});
    const Reference ref = task->reference(s, c);
    ASSERT_EQ(ref.results.size(), 2u);
    const auto exact = as_floats(ref.results[0]), scale = as_floats(ref.results[1]);
    EXPECT_EQ(std::vector<float>(exact.begin(), exact.end()), (std::vector<float>{0, -0.75f, 1.5f, 1.25f}));
    EXPECT_EQ(std::vector<float>(scale.begin(), scale.end()), (std::vector<float>{6, 4.75f, 1.5f, 1.25f}));
}

TEST(MlGemmW8a8, ReferenceScalesTheExactIntegerSum) {
    auto task = load("gemm_w8a8");
    const SizeSpec s{"t", false, {{"M", 2}, {"N", 1}, {"K", 2}}};
    Case c = task->make_case(s, 1, Trial::nominal);
    const int8_t a[] = {127, -128, -1, 3};
    const int8_t b[] = {127, 127};
    std::memcpy(c.buffers[0].data.data(), a, 4);
    std::memcpy(c.buffers[2].data.data(), b, 2);
    c.buffers[1].as<float>()[0] = 0.5f, c.buffers[1].as<float>()[1] = 1e-3f;
    c.buffers[3].as<float>()[0] = 2.0f;
    const Reference ref = task->reference(s, c);
    const auto out = as_floats(ref.results[0]);
    EXPECT_EQ(out[0], 0.5f * 2.0f * (127 * 127 - 128 * 127));  // -127
    EXPECT_EQ(out[1], static_cast<float>(static_cast<double>(1e-3f) * 2.0 * 254));
}

// ---------------------------------------------------------------------------------------------
// gemm_bf16: host-simulated kernels against the check

enum class Bf16Kernel { in_order, split_k, pairwise, truncating_tiles, truncated_store, bf16_accumulate, fp8_operands,
                        dropped_k_tile };

float truncate_to_float(double x) {  // toward zero, as a tensor core that truncates its fp32 sums
    const float f = static_cast<float>(x);
    return std::fabs(static_cast<double>(f)) > std::fabs(x) ? std::nextafter(f, 0.0f) : f;
}

float to_three_mantissa_bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    u += 0x7ffffu + ((u >> 20) & 1u);
    u &= 0xfff00000u;
    std::memcpy(&x, &u, 4);
    return x;
}

float dot(const float* a, const float* b, size_t k, Bf16Kernel kernel) {
    switch (kernel) {
        case Bf16Kernel::split_k: {  // four slices summed separately, then added
            float total = 0;
            for (size_t s = 0; s < 4; ++s) {
                float part = 0;
                for (size_t p = s * k / 4; p < (s + 1) * k / 4; ++p) part = std::fma(a[p], b[p], part);
                total += part;
            }
            return total;
        }
        case Bf16Kernel::pairwise: {
            std::vector<float> v(k);
            for (size_t p = 0; p < k; ++p) v[p] = a[p] * b[p];
            for (size_t w = 1; w < k; w *= 2)
                for (size_t p = 0; p + w < k; p += 2 * w) v[p] += v[p + w];
            return v[0];
        }
        case Bf16Kernel::truncating_tiles: {  // k16 chunks exact, accumulated with truncation
            float acc = 0;
            for (size_t p0 = 0; p0 < k; p0 += 16) {
                double chunk = 0;
                for (size_t p = p0; p < std::min(k, p0 + 16); ++p) chunk += static_cast<double>(a[p]) * b[p];
                acc = truncate_to_float(static_cast<double>(acc) + chunk);
            }
            return acc;
        }
        case Bf16Kernel::bf16_accumulate: {
            float acc = 0;
            for (size_t p = 0; p < k; ++p) acc = round_to_bf16(std::fma(a[p], b[p], acc));
            return acc;
        }
        case Bf16Kernel::fp8_operands: {
            float acc = 0;
            for (size_t p = 0; p < k; ++p) acc = std::fma(to_three_mantissa_bits(a[p]), to_three_mantissa_bits(b[p]), acc);
            return acc;
        }
        case Bf16Kernel::dropped_k_tile: {
            float acc = 0;
            for (size_t p = 0; p + 32 < k; ++p) acc = std::fma(a[p], b[p], acc);
            return acc;
        }
        default: {
            float acc = 0;
            for (size_t p = 0; p < k; ++p) acc = std::fma(a[p], b[p], acc);
            return acc;
        }
    }
}

std::vector<uint16_t> simulate_bf16(const Case& c, Mnk d, Bf16Kernel kernel) {
    const std::vector<float> a = bf16_values(c.buffers[0]), b = bf16_values(c.buffers[1]);
    std::vector<uint16_t> out(d.m * d.n);
    for (size_t i = 0; i < d.m; ++i)
        for (size_t j = 0; j < d.n; ++j) {
            const float v = dot(&a[i * d.k], &b[j * d.k], d.k, kernel);
            uint32_t bits;
            std::memcpy(&bits, &v, 4);
            out[i * d.n + j] = kernel == Bf16Kernel::truncated_store ? static_cast<uint16_t>(bits >> 16) : float_to_bf16(v);
        }
    return out;
}

TEST(MlGemmBf16, Fp32InAnyOrderPassesWithMarginAndWrongKernelsFailOnEverySmallSize) {
    auto task = load("gemm_bf16");
    double smallest = std::numeric_limits<double>::infinity();
    for (const auto& s : task->spec().profiles.at("small"))
        for (uint64_t seed = 1; seed <= 3; ++seed)
            for (Trial trial : {Trial::nominal, Trial::outlier}) {
                const Case c = task->make_case(s, seed, trial);
                const auto ref = task->reference(s, c);
                const Mnk d = mnk(s);
                for (auto k : {Bf16Kernel::in_order, Bf16Kernel::split_k, Bf16Kernel::pairwise, Bf16Kernel::truncating_tiles}) {
                    const auto good = task->check(s, c, ref, {bytes_of_words(simulate_bf16(c, d, k))});
                    EXPECT_TRUE(good.pass) << s.label << " kernel " << static_cast<int>(k) << ": " << good.message;
                    EXPECT_GE(good.tolerance, 50 * good.error) << s.label << " kernel " << static_cast<int>(k) << ": " << good.message;
                    if (good.error > 0) smallest = std::min(smallest, good.tolerance / good.error);
                }
                for (auto k : {Bf16Kernel::truncated_store, Bf16Kernel::bf16_accumulate, Bf16Kernel::fp8_operands,
                               Bf16Kernel::dropped_k_tile}) {
                    const auto bad = task->check(s, c, ref, {bytes_of_words(simulate_bf16(c, d, k))});
                    EXPECT_FALSE(bad.pass) << s.label << " seed " << seed << " kernel " << static_cast<int>(k) << ": "
                                           << bad.message;
                    EXPECT_GT(bad.error, 2 * bad.tolerance) << s.label << " kernel " << static_cast<int>(k) << ": " << bad.message;
                }
            }
    std::printf("gemm_bf16 host-simulated fp32 kernels: smallest margin %.3g\n", smallest);
}

// The device-reference path: the reference is the seed's bf16 output and S is bounded from norms.
TEST(MlGemmBf16, DeviceReferencePassesFp32KernelsAndRejectsWrongOnes) {
    auto task = load("gemm_bf16");
    const SizeSpec s{"t", false, {{"M", 16}, {"N", 256}, {"K", 512}}};
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(s, 2, trial);
        const Mnk d = mnk(s);
        const Reference device{{bytes_of_words(simulate_bf16(c, d, Bf16Kernel::in_order))}};
        const auto good = task->check(s, c, device, {bytes_of_words(simulate_bf16(c, d, Bf16Kernel::split_k))});
        EXPECT_TRUE(good.pass) << good.message;
        EXPECT_GE(good.tolerance, 50 * good.error) << good.message;
        for (auto k : {Bf16Kernel::bf16_accumulate, Bf16Kernel::fp8_operands, Bf16Kernel::dropped_k_tile})
            EXPECT_FALSE(task->check(s, c, device, {bytes_of_words(simulate_bf16(c, d, k))}).pass) << static_cast<int>(k);
    }
}

TEST(MlGemmBf16, MessageNamesTheElement) {
    auto task = load("gemm_bf16");
    const SizeSpec s = task->spec().profiles.at("small")[1];
    const Case c = task->make_case(s, 1, Trial::nominal);
    const auto ref = task->reference(s, c);
    auto out = simulate_bf16(c, mnk(s), Bf16Kernel::in_order);
    out[5 * 512 + 17] ^= 0x0010;  // 16 ulps off
    const auto r = task->check(s, c, ref, {bytes_of_words(out)});
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.message.find("(m=5, n=17)"), std::string::npos) << r.message;
}

// ---------------------------------------------------------------------------------------------
// gemm_w8a8: host-simulated kernels against the check

enum class W8Kernel { right, scale_first, bf16_sum, per_tensor_scale, swapped_scales, uint8, dropped_k_tile };

std::vector<uint16_t> simulate_w8a8(const Case& c, Mnk d, W8Kernel kernel) {
    const auto* a = c.buffers[0].as<int8_t>();
    const auto* b = c.buffers[2].as<int8_t>();
    const float* sa = c.buffers[1].as<float>();
    const float* sb = c.buffers[3].as<float>();
    std::vector<uint16_t> out(d.m * d.n);
    for (size_t i = 0; i < d.m; ++i)
        for (size_t j = 0; j < d.n; ++j) {
            int32_t sum = 0;
            const size_t k = kernel == W8Kernel::dropped_k_tile ? d.k - 64 : d.k;
            for (size_t p = 0; p < k; ++p) {
                const int x = kernel == W8Kernel::uint8 ? static_cast<uint8_t>(a[i * d.k + p]) : a[i * d.k + p];
                const int y = kernel == W8Kernel::uint8 ? static_cast<uint8_t>(b[j * d.k + p]) : b[j * d.k + p];
                sum += x * y;
            }
            float s_a = sa[i], s_b = sb[j];
            if (kernel == W8Kernel::per_tensor_scale) s_a = sa[0];
            if (kernel == W8Kernel::swapped_scales) s_a = sa[j % d.m], s_b = sb[i % d.n];  // token scale by channel
            const float total = static_cast<float>(sum);
            float v = s_a * s_b * total;
            if (kernel == W8Kernel::scale_first) v = s_a * (s_b * total);
            if (kernel == W8Kernel::bf16_sum) v = s_a * s_b * round_to_bf16(total);
            out[i * d.n + j] = float_to_bf16(v);
        }
    return out;
}

TEST(MlGemmW8a8, Fp32ScalingPassesWithMarginAndWrongKernelsFailOnEverySmallSize) {
    auto task = load("gemm_w8a8");
    double smallest = std::numeric_limits<double>::infinity();
    for (const auto& s : task->spec().profiles.at("small"))
        for (uint64_t seed = 1; seed <= 3; ++seed)
            for (Trial trial : {Trial::nominal, Trial::outlier}) {
                const Case c = task->make_case(s, seed, trial);
                const auto ref = task->reference(s, c);
                const Mnk d = mnk(s);
                for (auto k : {W8Kernel::right, W8Kernel::scale_first}) {
                    const auto good = task->check(s, c, ref, {bytes_of_words(simulate_w8a8(c, d, k))});
                    EXPECT_TRUE(good.pass) << s.label << ": " << good.message;
                    EXPECT_GE(good.tolerance, 50 * good.error) << s.label << ": " << good.message;
                    if (good.error > 0) smallest = std::min(smallest, good.tolerance / good.error);
                }
                for (auto k : {W8Kernel::bf16_sum, W8Kernel::swapped_scales, W8Kernel::uint8, W8Kernel::dropped_k_tile}) {
                    const auto bad = task->check(s, c, ref, {bytes_of_words(simulate_w8a8(c, d, k))});
                    EXPECT_FALSE(bad.pass) << s.label << " seed " << seed << " kernel " << static_cast<int>(k) << ": "
                                           << bad.message;
                }
                if (d.m > 1)  // one token: its scale is the tensor's
                    EXPECT_FALSE(task->check(s, c, ref, {bytes_of_words(simulate_w8a8(c, d, W8Kernel::per_tensor_scale))}).pass)
                        << s.label;
            }
    std::printf("gemm_w8a8 host-simulated fp32 kernels: smallest margin %.3g\n", smallest);
}

TEST(MlGemmW8a8, OutlierTrialSaturatesAndSpreadsTheScales) {
    auto task = load("gemm_w8a8");
    const SizeSpec s = task->spec().profiles.at("small")[2];
    const Case c = task->make_case(s, 1, Trial::outlier);
    const Mnk d = mnk(s);
    const auto* a = c.buffers[0].as<int8_t>();
    size_t saturated = 0;
    for (size_t i = 0; i < d.m * d.k; ++i) saturated += (a[i] == 127 || a[i] == -127);
    EXPECT_GE(saturated, 3 * d.k);  // three whole rows at least
    const float* sa = c.buffers[1].as<float>();
    float lo = INFINITY, hi = 0;
    for (size_t i = 0; i < d.m; ++i) lo = std::min(lo, sa[i]), hi = std::max(hi, sa[i]);
    EXPECT_GT(hi / lo, 1e6);
    // Nominal: no value at -128, every scale max|x| / 127 of a normal row.
    const Case n = task->make_case(s, 1, Trial::nominal);
    for (size_t i = 0; i < d.m * d.k; ++i) ASSERT_NE(n.buffers[0].as<int8_t>()[i], -128);
}

// ---------------------------------------------------------------------------------------------
// the real kernels through PoCL

class MlGemmBroken : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(MlGemmBroken, VariantIsIncorrectOnEverySeed) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto& [task, stem] = GetParam();
    test::expect_incorrect_on_every_seed(task, stem);
}

INSTANTIATE_TEST_SUITE_P(Gemm, MlGemmBroken,
                         ::testing::Values(std::pair{std::string("gemm_bf16"), std::string("gemm_bf16_bf16_accumulate")},
                                           std::pair{std::string("gemm_bf16"), std::string("gemm_bf16_fp8_operands")},
                                           std::pair{std::string("gemm_bf16"), std::string("gemm_bf16_dropped_k_tile")},
                                           std::pair{std::string("gemm_w8a8"), std::string("gemm_w8a8_per_tensor_scale")},
                                           std::pair{std::string("gemm_w8a8"), std::string("gemm_w8a8_uint8")},
                                           std::pair{std::string("gemm_w8a8"), std::string("gemm_w8a8_dropped_k_tile")}));

// Seeds and best kernels against the exact reference: the margin they are reported with, at every
// small size and in both trials; printed for the record (docs/ml-checks.md quotes them).
TEST(MlGemmKernels, ReportTheirMarginOnPocl) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    for (const char* name : {"gemm_bf16", "gemm_w8a8"})
        for (const char* file : {"seed.cl", "best.cl"}) test::expect_ok_with_margin(name, file);
}

}  // namespace
}  // namespace kevo
