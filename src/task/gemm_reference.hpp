// The exact reference of the ML pack's GEMM-shaped operators (gemm_*, fused_moe's expert GEMMs,
// attention's score and value products): C = A * B^T in double from the values the device holds
// (already rounded to the operand dtype and, for quantized operands, already dequantized).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kevo {

// A is m x k and B is n x k, both row-major (the layout of a weight matrix [out, in]); the result is
// m x n, row-major, each element the double-precision sum of the k products. Runs on every core.
std::vector<double> matmul_abt(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k);

}  // namespace kevo
