// The cuBLASLt GEMMs that measure the tensor-core ceilings (VendorRoutine::gemm_*): one plan per
// routine and size (descriptors, layouts and the heuristic's first algorithm), made on first use and
// kept, so that a timed call is the matmul alone.
#pragma once

#include "backend/backend.hpp"
#include "backends/cuda/cuda_api.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <map>
#include <utility>

#include "backends/cuda/vendor_libraries.hpp"

namespace kevo::cuda {

bool is_gemm(VendorRoutine routine);
// Bytes of one operand (A or B) and of D for an n x n x n GEMM of this routine.
uint64_t gemm_operand_bytes(VendorRoutine routine, uint64_t n);
uint64_t gemm_output_bytes(VendorRoutine routine, uint64_t n);

class LtGemm {
public:
    explicit LtGemm(const DriverApi& api) : api_(api) {}
    LtGemm(const LtGemm&) = delete;
    LtGemm& operator=(const LtGemm&) = delete;

    // Queues D <- A^T B on `stream`. An error says which step failed (no algorithm: the device or
    // this cuBLASLt does not support the type).
    Expected<void> enqueue(VendorRoutine routine, uint64_t n, CUdeviceptr a, CUdeviceptr b, CUdeviceptr d,
                           CUstream stream);
    // Frees the plans, the handle and the workspace; the context must be current.
    void release();

private:
    struct Plan {
        CublasLtApi::Handle op = nullptr, a = nullptr, b = nullptr, d = nullptr;
        CublasLtApi::Algo algo{};
    };
    Expected<const Plan*> plan(const CublasLtApi& lt, VendorRoutine routine, uint64_t n);
    void destroy(const CublasLtApi& lt, Plan& plan);

    const DriverApi& api_;
    CublasLtApi::Handle handle_ = nullptr;
    CUdeviceptr workspace_ = 0;
    std::map<std::pair<VendorRoutine, uint64_t>, Plan> plans_;
};

}  // namespace kevo::cuda

#endif
