// The per-element scale of a GEMM output's rounding floor: for C = A * B^T with K-long rows, element
// (m, n) is scaled by ||a_m||_2 * ||b_n||_2 / sqrt(K), the rms size of a dot product of those two
// rows (the typical |c| of random data; the fp32 accumulation error of a correct kernel, and the
// error of an operand rounded once too often, are both proportional to it). Unlike |c| itself it
// does not vanish where the K products cancel, and unlike a global rms it follows a row or a
// column that is much larger or smaller than the rest (massive channels, extreme scales, a zero
// column). Used by gemm_w4a16 and gemm_fp8_block as the `scale` of check_bf16_per_element.
#pragma once

#include <cstddef>
#include <span>

#include "task/checks.hpp"

namespace kevo {

// a is m x k and b is n x k, row-major, as the values the kernel's products are made of
// (dequantised); the result scales element i = m_index * n + n_index of the m x n output.
ElementScale dot_rms_scale(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k);

// For a product accumulated block by block (K in blocks of `block`, each block's partial carrying
// its own error, as Hopper's fp8 MMA does between DeepGEMM's fp32 promotions): the larger of
// dot_rms_scale and sqrt(sum over blocks of (||a_m,b|| ||b_n,b||)^2 / block), the blocks' own rms
// sizes in quadrature. The two agree where the blocks are alike; where one block dominates the
// dot product (a block scale far above its neighbours) the second follows that block, whose
// partial's error is what the element carries, instead of spreading it over all of K.
ElementScale block_dot_rms_scale(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k,
                                 size_t block);

}  // namespace kevo
