// Row norms of both operands, then the outer product of the norms over sqrt(K) (see gemm_scale.hpp).
#include "task/gemm_scale.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <memory>
#include <vector>

#include "core/parallel.hpp"

namespace kevo {
namespace {

std::vector<double> row_norms(std::span<const float> values, size_t rows, size_t cols) {
    std::vector<double> norms(rows);
    parallel_rows(rows, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
            double sum = 0;
            for (size_t c = 0; c < cols; ++c) sum += static_cast<double>(values[r * cols + c]) * values[r * cols + c];
            norms[r] = std::sqrt(sum);
        }
    });
    return norms;
}

// The squared norm of each (row, block) of a rows x k matrix: rows x (k / block) values.
std::vector<double> block_square_norms(std::span<const float> values, size_t rows, size_t k, size_t block) {
    const size_t blocks = k / block;
    std::vector<double> norms(rows * blocks);
    parallel_rows(rows, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r)
            for (size_t kb = 0; kb < blocks; ++kb) {
                double sum = 0;
                for (size_t c = kb * block; c < (kb + 1) * block; ++c)
                    sum += static_cast<double>(values[r * k + c]) * values[r * k + c];
                norms[r * blocks + kb] = sum;
            }
    });
    return norms;
}

}  // namespace

ElementScale block_dot_rms_scale(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k,
                                 size_t block) {
    assert(block > 0 && k % block == 0);
    const ElementScale whole = dot_rms_scale(a, b, m, n, k);
    auto a_blocks = std::make_shared<std::vector<double>>(block_square_norms(a, m, k, block));
    auto b_blocks = std::make_shared<std::vector<double>>(block_square_norms(b, n, k, block));
    const size_t blocks = k / block;
    const double inv_block = 1.0 / static_cast<double>(block);
    return [whole, a_blocks, b_blocks, n, blocks, inv_block](size_t i) {
        const double* ar = a_blocks->data() + (i / n) * blocks;
        const double* br = b_blocks->data() + (i % n) * blocks;
        double sum = 0;
        for (size_t kb = 0; kb < blocks; ++kb) sum += ar[kb] * br[kb];
        return std::max(whole(i), std::sqrt(sum * inv_block));
    };
}

ElementScale dot_rms_scale(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k) {
    assert(a.size() == m * k && b.size() == n * k && k > 0);
    // Shared so that the returned function stays cheap to copy.
    auto a_norms = std::make_shared<std::vector<double>>(row_norms(a, m, k));
    auto b_norms = std::make_shared<std::vector<double>>(row_norms(b, n, k));
    const double inv_sqrt_k = 1.0 / std::sqrt(static_cast<double>(k));
    return [a_norms, b_norms, n, inv_sqrt_k](size_t i) { return (*a_norms)[i / n] * (*b_norms)[i % n] * inv_sqrt_k; };
}

}  // namespace kevo
