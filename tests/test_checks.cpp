// Unit tests of the comparators in task/checks: per element against each element's own scale,
// relative L2, the binding of two rules, rms and max magnitude. Each rule is shown on both sides:
// FP32 rounding of the right computation passes with a wide margin, a subtly wrong one fails.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.hpp"
#include "task/checks.hpp"

namespace kevo {
namespace {

// saxpy's terms: x, y ~ N(0, 1), a = 2.5; want = a x + y in float64, rounded once.
struct Saxpy {
    std::vector<float> x, y, want;
    float a = 2.5f;

    explicit Saxpy(size_t n) : x(n), y(n), want(n) {
        rng::fill_normal(x, 5, 1, 0.0f, 1.0f);
        rng::fill_normal(y, 5, 2, 0.0f, 1.0f);
        for (size_t i = 0; i < n; ++i) want[i] = static_cast<float>(static_cast<double>(a) * x[i] + y[i]);
    }
    ElementScale terms() const {
        return [this](size_t i) { return std::fabs(static_cast<double>(a) * x[i]) + std::fabs(static_cast<double>(y[i])); };
    }
};

double margin(const CheckResult& r) { return r.error == 0 ? std::numeric_limits<double>::infinity() : r.tolerance / r.error; }

TEST(ChecksPerElement, Fp32RoundingPassesWithMarginAndAnOffsetFails) {
    const Saxpy s(1 << 16);
    std::vector<float> unfused(s.want.size()), fused(s.want.size()), offset(s.want.size());
    for (size_t i = 0; i < s.want.size(); ++i) {
        const volatile float product = s.a * s.x[i];  // two roundings, as without FMA contraction
        unfused[i] = product + s.y[i];
        fused[i] = std::fma(s.a, s.x[i], s.y[i]);
        offset[i] = fused[i] + 1e-4f;
    }
    const ElementTolerance rule{0, 1e-5};
    for (const auto* got : {&unfused, &fused}) {
        const auto r = check_per_element(*got, s.want, rule, s.terms());
        EXPECT_TRUE(r.pass) << r.message;
        EXPECT_EQ(r.kind, "per_element");
        EXPECT_GE(margin(r), 50) << r.message;
    }
    const auto bad = check_per_element(offset, s.want, rule, s.terms());
    EXPECT_FALSE(bad.pass);
    EXPECT_EQ(bad.kind, "per_element");
    EXPECT_GT(bad.error, 10 * bad.tolerance) << bad.message;
    // The old rule, 1e-5 * max(1, max|ref|), let the same offset through.
    EXPECT_TRUE(check_max_abs(offset, s.want, Tolerance{0, 1e-5, 1}).pass);
}

TEST(ChecksPerElement, ReportsTheElementNearestToFailingNotTheLargestError) {
    std::vector<float> want = {100.0f, 1.0f, 0.01f, 50.0f}, got = want;
    got[0] += 5e-4f;  // the largest |err|, but 5e-6 of its value
    got[2] += 2e-6f;  // 2e-4 of its value: the nearest to failing
    got[3] += 1e-4f;
    const auto r = check_per_element(got, want, ElementTolerance{0, 1e-3}, own_magnitude(want));
    EXPECT_TRUE(r.pass) << r.message;
    EXPECT_EQ(r.worst_index, 2);
    EXPECT_NEAR(r.error, 2e-6, 1e-9);
    EXPECT_NEAR(r.tolerance, 1e-5, 1e-12);
    EXPECT_NE(r.message.find("[2]"), std::string::npos) << r.message;

    got[2] = want[2] * 1.002f;
    const auto f = check_per_element(got, want, ElementTolerance{0, 1e-3}, own_magnitude(want));
    EXPECT_FALSE(f.pass);
    EXPECT_EQ(f.worst_index, 2);
    EXPECT_NE(f.message.find("got 0.01002"), std::string::npos) << f.message;
}

TEST(ChecksPerElement, AbsoluteFloorAndZeroScale) {
    const std::vector<float> want = {0.0f, 0.0f, 2.0f};
    // A zero scale and no floor: an exact element passes, any error fails.
    EXPECT_TRUE(check_per_element(want, want, ElementTolerance{0, 1e-3}, own_magnitude(want)).pass);
    std::vector<float> got = want;
    got[1] = 1e-30f;
    const auto r = check_per_element(got, want, ElementTolerance{0, 1e-3}, own_magnitude(want));
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.worst_index, 1);
    // The floor admits it; a constant scale acts as an absolute bound.
    EXPECT_TRUE(check_per_element(got, want, ElementTolerance{1e-20, 1e-3}, own_magnitude(want)).pass);
    got[2] = 2.5f;
    EXPECT_TRUE(check_per_element(got, want, ElementTolerance{0, 1e-3}, constant_scale(1000)).pass);
    EXPECT_FALSE(check_per_element(got, want, ElementTolerance{0, 1e-3}, constant_scale(100)).pass);
}

TEST(ChecksPerElement, NonFiniteAndSizeFailFirst) {
    std::vector<float> want(1000, 1.0f), got = want;
    got[700] = std::numeric_limits<float>::infinity();
    got[300] = std::numeric_limits<float>::quiet_NaN();
    const auto r = check_per_element(got, want, ElementTolerance{1, 1}, own_magnitude(want));
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.kind, "nan");
    EXPECT_EQ(r.worst_index, 300);
    EXPECT_NE(r.message.find("NaN at [300] (first of 2"), std::string::npos) << r.message;
    const auto sized = check_per_element(std::span<const float>(want).first(10), want, ElementTolerance{1, 1},
                                         own_magnitude(want));
    EXPECT_EQ(sized.kind, "size");
    EXPECT_FALSE(sized.pass);
}

TEST(ChecksRelativeL2, RoundingPassesAndAScaleOf1p0009Fails) {
    std::vector<float> want(1 << 15), rounded(want.size()), scaled(want.size());
    rng::fill_normal(want, 9, 1, 0.0f, 100.0f);
    for (size_t i = 0; i < want.size(); ++i) {
        // One float rounding of a value that is off by 1e-7 relative: what FP32 arithmetic leaves.
        rounded[i] = static_cast<float>(static_cast<double>(want[i]) * (1.0 + 1e-7 * (i % 2 ? 1 : -1)));
        scaled[i] = want[i] * 1.0009f;
    }
    const auto ok = check_relative_l2(rounded, want, 2e-5);
    EXPECT_TRUE(ok.pass) << ok.message;
    EXPECT_EQ(ok.kind, "rel_l2");
    EXPECT_GE(margin(ok), 50) << ok.message;
    const auto bad = check_relative_l2(scaled, want, 2e-5);
    EXPECT_FALSE(bad.pass);
    EXPECT_NEAR(bad.error, 9e-4, 1e-6) << bad.message;
    EXPECT_DOUBLE_EQ(bad.tolerance, 2e-5);
    EXPECT_NE(bad.message.find("9.0e-4"), std::string::npos) << bad.message;

    std::vector<float> nan = want;
    nan[5] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(check_relative_l2(nan, want, 1).kind, "nan");
    const std::vector<float> zeros(4, 0.0f), ones(4, 1.0f);
    EXPECT_TRUE(check_relative_l2(zeros, zeros, 0).pass);
    EXPECT_FALSE(check_relative_l2(ones, zeros, 1e9).pass);
}

TEST(ChecksBinding, TheFailingRuleOrTheSmallerMargin) {
    CheckResult a{true, "per_element", 1e-6, 1e-4, 3, "a"};  // margin 100
    CheckResult b{true, "rel_l2", 1e-7, 2e-6, -1, "b"};      // margin 20
    EXPECT_EQ(binding(a, b).message, "b");
    EXPECT_EQ(binding(b, a).message, "b");
    CheckResult exact{true, "rel_l2", 0, 2e-6, -1, "exact"};
    EXPECT_EQ(binding(a, exact).message, "a");
    CheckResult failed{false, "rel_l2", 1e-3, 2e-5, -1, "failed"};  // 50x outside
    EXPECT_EQ(binding(a, failed).message, "failed");
    EXPECT_EQ(binding(failed, a).message, "failed");
    CheckResult barely{false, "per_element", 1.1e-4, 1e-4, 7, "barely"};
    EXPECT_EQ(binding(barely, failed).message, "failed");
    EXPECT_EQ(binding(failed, barely).message, "failed");
}

TEST(ChecksMagnitudes, RmsAndMaxMagnitude) {
    const std::vector<float> v = {3.0f, -4.0f, 0.0f, 0.0f};
    EXPECT_DOUBLE_EQ(rms(v), 2.5);
    EXPECT_DOUBLE_EQ(max_magnitude(v), 4.0);
    EXPECT_EQ(rms(std::span<const float>()), 0.0);
    EXPECT_EQ(max_magnitude(std::span<const float>()), 0.0);
    // The floor of a Tolerance takes the larger of the start's and the result's magnitude.
    const std::vector<float> want = {0.5f}, got = {0.5f + 1.5e-5f};
    EXPECT_FALSE(check_max_abs(got, want, Tolerance{0, 2e-5, 0}).pass);
    EXPECT_TRUE(check_max_abs(got, want, Tolerance{0, 2e-5, max_magnitude(v)}).pass);
}

}  // namespace
}  // namespace kevo
