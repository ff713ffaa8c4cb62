// C = A * B^T in double: rows of C are split across cores; each dot product reads two contiguous
// rows of length k, so B's rows stream through the cache once per row block of A.
#include "task/gemm_reference.hpp"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "core/parallel.hpp"

namespace kevo {

SizeSpec gemm_size(int64_t m, int64_t n, int64_t k, bool heldout, double device_reference_macs) {
    SizeSpec s{fmt::format("{}x{}x{}", m, n, k), heldout, {{"M", m}, {"N", n}, {"K", k}}};
    s.device_reference = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) > device_reference_macs;
    return s;
}

GemmDims gemm_dims(const SizeSpec& size) {
    return {static_cast<size_t>(size.param("M")), static_cast<size_t>(size.param("N")), static_cast<size_t>(size.param("K"))};
}

std::vector<double> matmul_abt(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k) {
    assert(a.size() == m * k && b.size() == n * k);
    std::vector<double> c(m * n);
    constexpr size_t kRowBlock = 8;  // rows of A that share one pass over B
    const size_t blocks = (m + kRowBlock - 1) / kRowBlock;
    parallel_for(
        blocks,
        [&](size_t begin, size_t end) {
            for (size_t block = begin; block < end; ++block) {
                const size_t row_end = std::min(m, (block + 1) * kRowBlock);
                for (size_t j = 0; j < n; ++j) {
                    const float* b_row = b.data() + j * k;
                    for (size_t i = block * kRowBlock; i < row_end; ++i) {
                        const float* a_row = a.data() + i * k;
                        double sum = 0;
                        for (size_t p = 0; p < k; ++p) sum += static_cast<double>(a_row[p]) * b_row[p];
                        c[i * n + j] = sum;
                    }
                }
            }
        },
        1);
    return c;
}

}  // namespace kevo
