// The exact reference of the ML pack's GEMM-shaped operators (gemm_*, fused_moe's expert GEMMs,
// attention's score and value products): C = A * B^T in double from the values the device holds
// (already rounded to the operand dtype and, for quantized operands, already dequantized).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "backend/vendor_routines.hpp"
#include "task/task.hpp"

namespace kevo {

// A size "MxNxK" with params M, N, K; its reference comes from the device seed when M*N*K exceeds
// `device_reference_macs` (a double CPU reference beyond that takes more than a few seconds).
SizeSpec gemm_size(int64_t m, int64_t n, int64_t k, bool heldout, double device_reference_macs);
GemmDims gemm_dims(const SizeSpec& size);  // its M, N and K (vendor_routines.hpp's GemmDims: C is m x n)

// A is m x k and B is n x k, both row-major (the layout of a weight matrix [out, in]); the result is
// m x n, row-major, each element the double-precision sum of the k products. Runs on every core.
std::vector<double> matmul_abt(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k);

}  // namespace kevo
