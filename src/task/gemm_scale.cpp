// Row norms of both operands, then the outer product of the norms over sqrt(K) (see gemm_scale.hpp).
#include "task/gemm_scale.hpp"

#include <cassert>
#include <cmath>
#include <memory>
#include <vector>

#include "core/parallel.hpp"

namespace kevo {
namespace {

std::vector<double> row_norms(std::span<const float> values, size_t rows, size_t cols) {
    std::vector<double> norms(rows);
    parallel_for(rows, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
            double sum = 0;
            for (size_t c = 0; c < cols; ++c) sum += static_cast<double>(values[r * cols + c]) * values[r * cols + c];
            norms[r] = std::sqrt(sum);
        }
    });
    return norms;
}

}  // namespace

ElementScale dot_rms_scale(std::span<const float> a, std::span<const float> b, size_t m, size_t n, size_t k) {
    assert(a.size() == m * k && b.size() == n * k && k > 0);
    // Shared so that the returned function stays cheap to copy.
    auto a_norms = std::make_shared<std::vector<double>>(row_norms(a, m, k));
    auto b_norms = std::make_shared<std::vector<double>>(row_norms(b, n, k));
    const double inv_sqrt_k = 1.0 / std::sqrt(static_cast<double>(k));
    return [a_norms, b_norms, n, inv_sqrt_k](size_t i) { return (*a_norms)[i / n] * (*b_norms)[i % n] * inv_sqrt_k; };
}

}  // namespace kevo
