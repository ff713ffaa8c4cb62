// Checks of a peer's output, so that a ratio against a peer is a ratio against a right answer:
// the axpy peers are compared element by element with a x + y on the host; the FFT peer is
// compared at a few frequency bins with a direct DFT in double precision (a whole host FFT of a
// 512^3 cube would cost more than the bench of the task itself); the GEMM peers are compared at a
// sample of output elements (the four corners and 60 drawn ones) with dot products in double.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kevo {

// Why `y_out` is not a x + y_in (the worst element, its value and the expected one); nullopt when right.
std::optional<std::string> check_axpy(const std::vector<float>& x, const std::vector<float>& y_in, float a,
                                      const std::vector<float>& y_out);

using FrequencyBin = std::array<uint64_t, 3>;  // (kx, ky, kz)

// The bins check_fft3d samples for a cube of side n: the zero frequency, one fixed mixed bin and
// two drawn from a fixed stream, all distinct where n allows.
std::vector<FrequencyBin> fft3d_check_bins(uint64_t n);

// Why `out` is not the forward, unnormalised 3-D DFT of `in` at the sampled bins; nullopt when
// right. Both hold n^3 interleaved (re, im) floats, index (k n + j) n + i. Tolerance as the task's:
// 1e-3 + 1e-3 max |X| over the sampled bins.
std::optional<std::string> check_fft3d(const std::vector<float>& in, const std::vector<float>& out, uint64_t n);

// The output elements the GEMM checks sample in a row-major [rows, cols] result: the four corners, then
// drawn ones from a fixed stream (distinct where the matrix allows).
std::vector<std::pair<size_t, size_t>> gemm_check_samples(size_t rows, size_t cols);

// Why the bf16 C (row-major [m, n], as 16-bit words) is not X W^T (x [m, k], w [n, k]) at the sampled
// elements; nullopt when right. gemm_bf16's rule: half an ulp of the exact value plus 2^-13 sum |x w|.
std::optional<std::string> check_gemm_bf16(std::span<const float> x, std::span<const float> w, size_t m, size_t n,
                                           size_t k, std::span<const uint16_t> c);
// The int32 C exactly X W^T (int8 operands) at the sampled elements.
std::optional<std::string> check_gemm_int8(std::span<const int8_t> x, std::span<const int8_t> w, size_t m, size_t n,
                                           size_t k, std::span<const int32_t> c);
// The bf16 C of the fp8 block-scaled GEMM: sum over 128-wide k blocks of a_scale[i, kb] b_scale[j / 128, kb]
// times the block's products (x, w the decoded e4m3 values; a_scale [m, k/128], b_scale [n/128, k/128],
// row-major), within one ulp plus 2^-10 of the sum of the magnitudes (Hopper's fp8 MMA accumulates
// with fewer than fp32's bits between promotions).
std::optional<std::string> check_gemm_fp8_block(std::span<const float> x, std::span<const float> a_scale,
                                                std::span<const float> w, std::span<const float> b_scale, size_t m,
                                                size_t n, size_t k, std::span<const uint16_t> c);

}  // namespace kevo
