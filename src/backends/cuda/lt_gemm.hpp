// The cuBLASLt GEMMs behind VendorRoutine::gemm_*: the tensor-core ceilings (n x n x n) and the bench
// peers of the ML pack's GEMM tasks (m x n x k, with block scales for gemm_fp8_block). One plan per
// routine and extent (descriptors, layouts and the heuristic's first algorithm), made on first use
// and kept, so that a timed call is the matmul alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/vendor_routines.hpp"
#include "backends/cuda/cuda_api.hpp"


namespace kevo::cuda {

bool is_gemm(VendorRoutine routine);
// Bytes of A (k x m), B (k x n) and D (m x n) of this routine at this extent.
uint64_t gemm_a_bytes(VendorRoutine routine, const GemmDims& dims);
uint64_t gemm_b_bytes(VendorRoutine routine, const GemmDims& dims);
uint64_t gemm_output_bytes(VendorRoutine routine, const GemmDims& dims);
// The first cuBLASLt version with the VEC128_32F and BLK128x128_32F scale modes (CUDA 12.9), and why
// a version lacks them ("" when it has them).
constexpr size_t kBlockScaleLtVersion = 120900;
std::string block_scale_support(size_t lt_version);

}  // namespace kevo::cuda

#if KEVO_HAVE_CUDA_HEADERS

#include <map>
#include <tuple>

#include "backends/cuda/vendor_libraries.hpp"

namespace kevo::cuda {

class LtGemm {
public:
    explicit LtGemm(const DriverApi& api) : api_(api) {}
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;

    // Queues D <- A^T B on `stream` (gemm_fp8_block: with the block scales at scale_a, scale_b). An
    // error says which step failed (no algorithm: the device or this cuBLASLt does not support the
    // type or the scale mode).
    Expected<void> enqueue(VendorRoutine routine, const GemmDims& dims, CUdeviceptr a, CUdeviceptr b, CUdeviceptr d,
                           CUdeviceptr scale_a, CUdeviceptr scale_b, CUstream stream);
    // Frees the plans, the handle and the workspace; the context must be current.
    void release();

private:
    struct Plan {
        CublasLtApi::Handle op = nullptr, a = nullptr, b = nullptr, d = nullptr;
        CublasLtApi::Algo algo{};
    };
    using Key = std::tuple<VendorRoutine, uint64_t, uint64_t, uint64_t>;
    // The plan for one (routine, shape); a block-scaled one is asked of the heuristic with its scale
    // pointers already set, as NVIDIA's block-scaled sample does (asked without them, the H200's
    // cuBLASLt 13.1 answered status 7 at every shape; that this was the cause is not yet confirmed).
    Expected<const Plan*> plan(const CublasLtApi& lt, VendorRoutine routine, const GemmDims& dims, CUdeviceptr scale_a,
                               CUdeviceptr scale_b);
    void destroy(const CublasLtApi& lt, Plan& plan);

    const DriverApi& api_;
    CublasLtApi::Handle handle_ = nullptr;
    CUdeviceptr workspace_ = 0;
    std::map<Key, Plan> plans_;
};

}  // namespace kevo::cuda

#endif
