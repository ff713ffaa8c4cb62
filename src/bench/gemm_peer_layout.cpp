// The task-to-cuBLASLt translation of the GEMM peers (see gemm_peer_layout.hpp).
#include "bench/gemm_peer_layout.hpp"

#include <cassert>

namespace kevo {

GemmDims lt_dims_for(VendorRoutine routine, const TaskGemm& task) {
    const uint64_t columns = routine == VendorRoutine::gemm_fp8_block ? (task.m + 3) / 4 * 4 : task.m;
    return {task.n, columns, task.k};
}

std::vector<float> lt_vec128_scales(std::span<const float> a_scale, size_t rows, size_t k_blocks, size_t lead) {
    assert(a_scale.size() == rows * k_blocks && lead >= rows);
    std::vector<float> out(k_blocks * lead, 0.0f);
    for (size_t r = 0; r < rows; ++r)
        for (size_t kb = 0; kb < k_blocks; ++kb) out[kb * lead + r] = a_scale[r * k_blocks + kb];
    return out;
}

std::vector<float> lt_blk128_scales(std::span<const float> b_scale, size_t n_blocks, size_t k_blocks, size_t lead) {
    assert(b_scale.size() == n_blocks * k_blocks && lead >= k_blocks);
    std::vector<float> out(n_blocks * lead, 0.0f);
    for (size_t nb = 0; nb < n_blocks; ++nb)
        for (size_t kb = 0; kb < k_blocks; ++kb) out[nb * lead + kb] = b_scale[nb * k_blocks + kb];
    return out;
}

std::vector<double> lt_tn_reference(std::span<const float> a, std::span<const float> b, const GemmDims& d) {
    assert(a.size() == d.k * d.m && b.size() == d.k * d.n);
    std::vector<double> out(d.m * d.n);
    for (size_t j = 0; j < d.n; ++j)
        for (size_t i = 0; i < d.m; ++i) {
            double sum = 0;
            for (size_t p = 0; p < d.k; ++p) sum += static_cast<double>(a[i * d.k + p]) * b[j * d.k + p];
            out[j * d.m + i] = sum;
        }
    return out;
}

}  // namespace kevo
