// The checks a peer's output passes before `kevo bench` quotes a ratio against it: axpy element
// by element, the 3-D FFT at sampled bins against a direct DFT. The FFT cases use transforms known
// in closed form, so they do not lean on the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <set>

#include "bench/peer_checks.hpp"

using kevo::check_axpy;
using kevo::check_fft3d;
using kevo::fft3d_check_bins;

namespace {

// The forward DFT of a unit impulse at (i0, j0, k0): X(kx, ky, kz) = exp(-2 pi i (kx i0 + ky j0 + kz k0) / n),
// written with index (k n + j) n + i, or with the axes swapped (index (i n + j) n + k) when `transposed`.
std::vector<float> impulse_transform(uint64_t n, uint64_t i0, uint64_t j0, uint64_t k0, bool transposed) {
    std::vector<float> out(2 * n * n * n);
    for (uint64_t kz = 0; kz < n; ++kz)
        for (uint64_t ky = 0; ky < n; ++ky)
            for (uint64_t kx = 0; kx < n; ++kx) {
                const double phase = -2.0 * std::numbers::pi * static_cast<double>((kx * i0 + ky * j0 + kz * k0) % n) / n;
                const uint64_t at = transposed ? (kx * n + ky) * n + kz : (kz * n + ky) * n + kx;
                out[2 * at] = static_cast<float>(std::cos(phase));
                out[2 * at + 1] = static_cast<float>(std::sin(phase));
            }
    return out;
}

std::vector<float> impulse(uint64_t n, uint64_t i0, uint64_t j0, uint64_t k0) {
    std::vector<float> in(2 * n * n * n, 0.0f);
    in[2 * ((k0 * n + j0) * n + i0)] = 1.0f;
    return in;
}

}  // namespace

TEST(PeerChecks, AxpyRightPassesWrongElementIsNamed) {
    const std::vector<float> x = {1, 2, 3, 4, 5}, y = {0.5f, -1, 0, 2, 8};
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = 2.5f * x[i] + y[i];
    EXPECT_FALSE(check_axpy(x, y, 2.5f, out));

    auto wrong = out;
    wrong[3] += 0.01f;
    const auto why = check_axpy(x, y, 2.5f, wrong);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("y[3]"), std::string::npos) << *why;

    auto nan = out;
    nan[1] = NAN;
    wrong[1] = NAN;  // NaN outranks any finite error
    ASSERT_TRUE(check_axpy(x, y, 2.5f, nan));
    EXPECT_NE(check_axpy(x, y, 2.5f, wrong)->find("y[1]"), std::string::npos);

    out.pop_back();
    EXPECT_NE(check_axpy(x, y, 2.5f, out)->find("4 outputs for 5 inputs"), std::string::npos);
}

TEST(PeerChecks, Fft3dBinsAreDistinctAndInRange) {
    for (uint64_t n : {2u, 4u, 8u, 64u, 512u}) {
        const auto bins = fft3d_check_bins(n);
        EXPECT_EQ(bins.size(), 4u) << n;
        EXPECT_EQ(std::set(bins.begin(), bins.end()).size(), bins.size()) << n;
        for (const auto& b : bins)
            for (auto k : b) EXPECT_LT(k, n);
    }
}

TEST(PeerChecks, Fft3dAcceptsTheTransformAndRefusesLayoutAndValueErrors) {
    constexpr uint64_t n = 8;
    const auto in = impulse(n, 1, 2, 3);
    EXPECT_FALSE(check_fft3d(in, impulse_transform(n, 1, 2, 3, false), n));

    // The other index order is a different transform of this impulse, and is refused.
    EXPECT_TRUE(check_fft3d(in, impulse_transform(n, 1, 2, 3, true), n));

    // One sampled bin off by more than the tolerance: the check names it.
    auto off = impulse_transform(n, 1, 2, 3, false);
    off[0] += 0.01f;  // bin (0, 0, 0), real part
    const auto why = check_fft3d(in, off, n);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("bin (0, 0, 0)"), std::string::npos) << *why;

    // An inverse (conjugate) transform is refused too.
    auto inverse = impulse_transform(n, 1, 2, 3, false);
    for (size_t k = 1; k < inverse.size(); k += 2) inverse[k] = -inverse[k];
    EXPECT_TRUE(check_fft3d(in, inverse, n));

    EXPECT_TRUE(check_fft3d(in, std::vector<float>(10), n));
}
