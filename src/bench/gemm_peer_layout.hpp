// How a GEMM task's problem becomes a cuBLASLt call (pure functions, no device): the task computes
// row-major C[M, N] = X[M, K] * W[N, K]^T; cuBLASLt's "TN" GEMM computes column-major D = A^T B. With
// A = W (k x m column-major is W row-major), B = X and (m, n, k) = (N, M, K), D is C row-major. The
// block scales of gemm_fp8_block (task layout: a_scale [M, K/128] and b_scale [N/128, K/128], both
// row-major) are re-laid for cuBLASLt's VEC128_32F (B side: n fastest) and BLK128x128_32F (A side:
// k-blocks fastest) modes, their fastest extents padded to multiples of 4.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/vendor_routines.hpp"

namespace kevo {

struct TaskGemm {
    uint64_t m = 0, n = 0, k = 0;  // the task's M, N, K
};

// The cuBLASLt extent for the task's problem: (N, M, K); for gemm_fp8_block M is rounded up to a
// multiple of 4 (the VEC128 scales' alignment), the extra rows of X being zeros and their columns
// of D ignored.
GemmDims lt_dims_for(VendorRoutine routine, const TaskGemm& task);

// a_scale [rows, k_blocks] row-major -> cuBLASLt VEC128 (B side): k_blocks rows of `lead` values
// (lead >= rows; the padding is zero).
std::vector<float> lt_vec128_scales(std::span<const float> a_scale, size_t rows, size_t k_blocks, size_t lead);
// b_scale [n_blocks, k_blocks] row-major -> cuBLASLt BLK128x128 (A side): n_blocks columns of `lead`
// k-block values (lead >= k_blocks; the padding is zero).
std::vector<float> lt_blk128_scales(std::span<const float> b_scale, size_t n_blocks, size_t k_blocks, size_t lead);

// cuBLASLt's D = A^T B on the host, in double, for the tests of the translation: a is k x m and b is
// k x n column-major (leading dimension k), the result m x n column-major.
std::vector<double> lt_tn_reference(std::span<const float> a, std::span<const float> b, const GemmDims& dims);

}  // namespace kevo
