// Host checks of the peers' outputs (see peer_checks.hpp).
#include "bench/peer_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "core/dtypes.hpp"
#include "core/rng.hpp"

namespace kevo {

std::optional<std::string> check_axpy(const std::vector<float>& x, const std::vector<float>& y_in, float a,
                                      const std::vector<float>& y_out) {
    if (y_out.size() != x.size() || y_in.size() != x.size())
        return fmt::format("{} outputs for {} inputs", y_out.size(), x.size());
    // One rounding of the product and one of the sum, or a single fused one: within a few ulps.
    size_t worst = 0;
    double worst_excess = -1;
    for (size_t i = 0; i < x.size(); ++i) {
        const double expected = static_cast<double>(a) * x[i] + y_in[i];
        const double error = std::abs(y_out[i] - expected);
        const double tolerance = 1e-6 + 1e-5 * std::abs(expected);
        if (error <= tolerance) continue;
        const double excess = std::isnan(error) ? INFINITY : error - tolerance;  // NaN is the worst
        if (excess > worst_excess) {
            worst = i;
            worst_excess = excess;
        }
    }
    if (worst_excess < 0) return std::nullopt;
    return fmt::format("y[{}] = {} where a x + y = {}", worst, y_out[worst],
                       static_cast<double>(a) * x[worst] + y_in[worst]);
}

std::vector<FrequencyBin> fft3d_check_bins(uint64_t n) {
    std::vector<FrequencyBin> bins = {{0, 0, 0}, {1 % n, 2 % n, 3 % n}};
    for (uint64_t draw = 0; bins.size() < 4 && draw < 16; ++draw) {
        const FrequencyBin b = {rng::bits(0x62696e73, 0, 3 * draw) % n, rng::bits(0x62696e73, 0, 3 * draw + 1) % n,
                                rng::bits(0x62696e73, 0, 3 * draw + 2) % n};
        if (std::find(bins.begin(), bins.end(), b) == bins.end()) bins.push_back(b);
    }
    return bins;
}

namespace {

// X(kx, ky, kz) = sum over (i, j, k) of a[(k n + j) n + i] exp(-2 pi i (kx i + ky j + kz k) / n),
// summed axis by axis: n^3 multiply-adds in double.
std::complex<double> dft_bin(const std::vector<float>& in, uint64_t n, const FrequencyBin& bin,
                             const std::vector<std::complex<double>>& twiddle) {
    std::complex<double> total = 0;
    for (uint64_t k = 0; k < n; ++k) {
        std::complex<double> plane = 0;
        for (uint64_t j = 0; j < n; ++j) {
            const float* line = in.data() + 2 * ((k * n + j) * n);
            std::complex<double> sum = 0;
            for (uint64_t i = 0; i < n; ++i)
                sum += std::complex<double>(line[2 * i], line[2 * i + 1]) * twiddle[(bin[0] * i) % n];
            plane += sum * twiddle[(bin[1] * j) % n];
        }
        total += plane * twiddle[(bin[2] * k) % n];
    }
    return total;
}

}  // namespace

std::optional<std::string> check_fft3d(const std::vector<float>& in, const std::vector<float>& out, uint64_t n) {
    const uint64_t cells = n * n * n;
    if (in.size() != 2 * cells || out.size() != 2 * cells)
        return fmt::format("{} floats in, {} out, for a cube of side {} ({} expected)", in.size(), out.size(), n, 2 * cells);
    std::vector<std::complex<double>> twiddle(n);
    for (uint64_t m = 0; m < n; ++m)
        twiddle[m] = std::polar(1.0, -2.0 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n));

    const auto bins = fft3d_check_bins(n);
    std::vector<std::complex<double>> expected;
    double largest = 0;
    for (const auto& bin : bins) {
        expected.push_back(dft_bin(in, n, bin, twiddle));
        largest = std::max(largest, std::abs(expected.back()));
    }
    const double tolerance = 1e-3 + 1e-3 * largest;
    for (size_t b = 0; b < bins.size(); ++b) {
        const auto [kx, ky, kz] = bins[b];
        const uint64_t at = (kz * n + ky) * n + kx;
        const std::complex<double> got(out[2 * at], out[2 * at + 1]);
        const double error = std::abs(got - expected[b]);
        if (!(error <= tolerance))
            return fmt::format("bin ({}, {}, {}) is ({:.6g}, {:.6g}) where the DFT gives ({:.6g}, {:.6g}); tolerance {:.3g}",
                               kx, ky, kz, got.real(), got.imag(), expected[b].real(), expected[b].imag(), tolerance);
    }
    return std::nullopt;
}

std::vector<std::pair<size_t, size_t>> gemm_check_samples(size_t rows, size_t cols) {
    std::vector<std::pair<size_t, size_t>> out = {{0, 0}, {0, cols - 1}, {rows - 1, 0}, {rows - 1, cols - 1}};
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    const size_t wanted = std::min<size_t>(64, rows * cols);
    for (uint64_t draw = 0; out.size() < wanted && draw < 1024; ++draw) {
        const std::pair<size_t, size_t> e = {rng::bits(0x67656d6d, 0, 2 * draw) % rows, rng::bits(0x67656d6d, 0, 2 * draw + 1) % cols};
        if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    }
    return out;
}

namespace {

// A bf16 element against its exact value: beyond `own` ulps of the exact value, at most `rel` * scale.
std::optional<std::string> bf16_element(size_t i, size_t j, uint16_t got_bits, double exact, double scale, double own,
                                        double rel) {
    const double got = bf16_to_float(got_bits);
    const double allowed = own * bf16_ulp(exact) + rel * scale;
    if (std::abs(got - exact) <= allowed) return std::nullopt;  // NaN fails here too
    return fmt::format("C[{}, {}] = {:.6g} where the exact value is {:.6g} (allowed {:.3g})", i, j, got, exact, allowed);
}

}  // namespace

std::optional<std::string> check_gemm_bf16(std::span<const float> x, std::span<const float> w, size_t m, size_t n,
                                           size_t k, std::span<const uint16_t> c) {
    if (x.size() != m * k || w.size() != n * k || c.size() < m * n)
        return fmt::format("{} values of X, {} of W and {} of C for {}x{}x{}", x.size(), w.size(), c.size(), m, n, k);
    for (const auto& [i, j] : gemm_check_samples(m, n)) {
        double exact = 0, scale = 0;
        for (size_t p = 0; p < k; ++p) {
            const double v = static_cast<double>(x[i * k + p]) * w[j * k + p];
            exact += v;
            scale += std::abs(v);
        }
        if (auto wrong = bf16_element(i, j, c[i * n + j], exact, scale, 0.5, 0x1.0p-13)) return wrong;
    }
    return std::nullopt;
}

std::optional<std::string> check_gemm_int8(std::span<const int8_t> x, std::span<const int8_t> w, size_t m, size_t n,
                                           size_t k, std::span<const int32_t> c) {
    if (x.size() != m * k || w.size() != n * k || c.size() < m * n)
        return fmt::format("{} values of X, {} of W and {} of C for {}x{}x{}", x.size(), w.size(), c.size(), m, n, k);
    for (const auto& [i, j] : gemm_check_samples(m, n)) {
        int64_t exact = 0;
        for (size_t p = 0; p < k; ++p) exact += static_cast<int64_t>(x[i * k + p]) * w[j * k + p];
        if (c[i * n + j] != exact) return fmt::format("C[{}, {}] = {} where the exact sum is {}", i, j, c[i * n + j], exact);
    }
    return std::nullopt;
}

std::optional<std::string> check_gemm_fp8_block(std::span<const float> x, std::span<const float> a_scale,
                                                std::span<const float> w, std::span<const float> b_scale, size_t m,
                                                size_t n, size_t k, std::span<const uint16_t> c) {
    const size_t k_blocks = (k + 127) / 128, n_blocks = (n + 127) / 128;
    if (x.size() != m * k || w.size() != n * k || a_scale.size() != m * k_blocks || b_scale.size() != n_blocks * k_blocks ||
        c.size() < m * n)
        return fmt::format("operand, scale or output sizes do not fit {}x{}x{}", m, n, k);
    for (const auto& [i, j] : gemm_check_samples(m, n)) {
        double exact = 0, scale = 0;
        for (size_t kb = 0; kb < k_blocks; ++kb) {
            double block = 0, magnitude = 0;
            for (size_t p = kb * 128; p < std::min(k, kb * 128 + 128); ++p) {
                const double v = static_cast<double>(x[i * k + p]) * w[j * k + p];
                block += v;
                magnitude += std::abs(v);
            }
            const double s = static_cast<double>(a_scale[i * k_blocks + kb]) * b_scale[(j / 128) * k_blocks + kb];
            exact += s * block;
            scale += std::abs(s) * magnitude;
        }
        if (auto wrong = bf16_element(i, j, c[i * n + j], exact, scale, 1.0, 0x1.0p-10)) return wrong;
    }
    return std::nullopt;
}

}  // namespace kevo
