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

}  // namespace kevo
