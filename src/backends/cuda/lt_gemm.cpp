// See lt_gemm.hpp. Every GEMM is "TN" (A transposed, B not), column-major: the layout cuBLASLt
// requires for fp8 and int8 on Hopper, used for bf16 too so that all are alike. A task's row-major
// C = X W^T (X [M, K], W [N, K]) is this GEMM with A = W, B = X, (m, n, k) = (N, M, K): D then holds
// C row-major (bench/gemm_peer_layout.hpp).
#include "backends/cuda/lt_gemm.hpp"

#include <fmt/format.h>

namespace kevo::cuda {

bool is_gemm(VendorRoutine routine) {
    return routine == VendorRoutine::gemm_bf16 || routine == VendorRoutine::gemm_fp8 ||
           routine == VendorRoutine::gemm_int8 || routine == VendorRoutine::gemm_fp8_block;
}

namespace {

uint64_t operand_size(VendorRoutine routine) { return routine == VendorRoutine::gemm_bf16 ? 2 : 1; }
uint64_t output_size(VendorRoutine routine) { return routine == VendorRoutine::gemm_int8 ? 4 : 2; }

}  // namespace

uint64_t gemm_a_bytes(VendorRoutine routine, const GemmDims& d) { return d.k * d.m * operand_size(routine); }
uint64_t gemm_b_bytes(VendorRoutine routine, const GemmDims& d) { return d.k * d.n * operand_size(routine); }
uint64_t gemm_output_bytes(VendorRoutine routine, const GemmDims& d) { return d.m * d.n * output_size(routine); }

std::string block_scale_support(size_t lt_version) {
    if (lt_version >= kBlockScaleLtVersion) return "";
    return fmt::format("cuBLASLt {} has no VEC128_32F / BLK128x128_32F block scaling (it needs {}, CUDA 12.9)",
                       lt_version, kBlockScaleLtVersion);
}

}  // namespace kevo::cuda

#if KEVO_HAVE_CUDA_HEADERS

namespace kevo::cuda {
namespace {

constexpr uint64_t kWorkspaceBytes = 32ull << 20;  // what cuBLASLt's Hopper kernels ask for at most

struct GemmTypes {
    int operand, output, compute, scale;
};

GemmTypes types_of(VendorRoutine routine) {
    using L = CublasLtApi;
    switch (routine) {
        case VendorRoutine::gemm_fp8:
        case VendorRoutine::gemm_fp8_block: return {L::kR8F_E4M3, L::kR16BF, L::kCompute32F, L::kR32F};
        case VendorRoutine::gemm_int8: return {L::kR8I, L::kR32I, L::kCompute32I, L::kR32I};
        default: return {L::kR16BF, L::kR16BF, L::kCompute32F, L::kR32F};
    }
}

std::string extent(const GemmDims& d) {
    if (d.m == d.n && d.n == d.k) return fmt::format("{}^3", d.n);
    return fmt::format("{}x{}x{}", d.m, d.n, d.k);
}

// Points the descriptor's A and B scales at the block-scale buffers; 0 when cuBLASLt accepts them.
int set_scale_pointers(const CublasLtApi& lt, CublasLtApi::Handle op, CUdeviceptr scale_a, CUdeviceptr scale_b) {
    const void* sa = reinterpret_cast<const void*>(static_cast<uintptr_t>(scale_a));
    const void* sb = reinterpret_cast<const void*>(static_cast<uintptr_t>(scale_b));
    int r = lt.cublasLtMatmulDescSetAttribute(op, CublasLtApi::kDescAScalePointer, &sa, sizeof sa);
    if (r == 0) r = lt.cublasLtMatmulDescSetAttribute(op, CublasLtApi::kDescBScalePointer, &sb, sizeof sb);
    return r;
}

}  // namespace

void LtGemm::destroy(const CublasLtApi& lt, Plan& p) {
    for (auto* layout : {p.a, p.b, p.d})
        if (layout) lt.cublasLtMatrixLayoutDestroy(layout);
    if (p.op) lt.cublasLtMatmulDescDestroy(p.op);
    p = Plan{};
}

Expected<const LtGemm::Plan*> LtGemm::plan(const CublasLtApi& lt, VendorRoutine routine, const GemmDims& dims,
                                           CUdeviceptr scale_a, CUdeviceptr scale_b) {
    const Key key{routine, dims.m, dims.n, dims.k};
    if (auto it = plans_.find(key); it != plans_.end()) return &it->second;
    const char* what = vendor_routine_name(routine);
    auto failed = [&](const char* call, int status) {
        return make_error(fmt::format("cuBLASLt {} {}: {} failed with cublasStatus {}", what, extent(dims), call, status));
    };
    const bool block_scaled = routine == VendorRoutine::gemm_fp8_block;
    if (block_scaled) {
        if (const std::string why = block_scale_support(lt.cublasLtGetVersion()); !why.empty()) return make_error(why);
    }
    if (!handle_) {
        if (int r = lt.cublasLtCreate(&handle_); r != 0) {
            handle_ = nullptr;
            return failed("cublasLtCreate", r);
        }
    }
    if (!workspace_) {
        if (CUresult r = api_.cuMemAlloc(&workspace_, kWorkspaceBytes); r != CUDA_SUCCESS) {
            workspace_ = 0;
            return make_error(fmt::format("cuBLASLt {}: cannot allocate its {} MiB workspace", what, kWorkspaceBytes >> 20));
        }
    }
    const GemmTypes t = types_of(routine);
    Plan p;
    const int trans_a = CublasLtApi::kOpT, trans_b = CublasLtApi::kOpN;
    const auto lead_k = static_cast<int64_t>(dims.k), lead_m = static_cast<int64_t>(dims.m);
    int r = lt.cublasLtMatmulDescCreate(&p.op, t.compute, t.scale);
    if (r == 0) r = lt.cublasLtMatmulDescSetAttribute(p.op, CublasLtApi::kDescTransA, &trans_a, sizeof trans_a);
    if (r == 0) r = lt.cublasLtMatmulDescSetAttribute(p.op, CublasLtApi::kDescTransB, &trans_b, sizeof trans_b);
    if (r == 0) r = lt.cublasLtMatrixLayoutCreate(&p.a, t.operand, dims.k, dims.m, lead_k);
    if (r == 0) r = lt.cublasLtMatrixLayoutCreate(&p.b, t.operand, dims.k, dims.n, lead_k);
    if (r == 0) r = lt.cublasLtMatrixLayoutCreate(&p.d, t.output, dims.m, dims.n, lead_m);
    if (r != 0) {
        destroy(lt, p);
        return failed("creating the descriptors", r);
    }
    if (block_scaled) {
        // The modes decide which kernels the heuristic may offer. The pointers are set before the
        // query too (see plan() in the header) and again per call (enqueue), as buffers change.
        const int32_t mode_a = CublasLtApi::kScaleBlk128x128_32F, mode_b = CublasLtApi::kScaleVec128_32F;
        r = lt.cublasLtMatmulDescSetAttribute(p.op, CublasLtApi::kDescAScaleMode, &mode_a, sizeof mode_a);
        if (r == 0) r = lt.cublasLtMatmulDescSetAttribute(p.op, CublasLtApi::kDescBScaleMode, &mode_b, sizeof mode_b);
        if (r == 0) r = set_scale_pointers(lt, p.op, scale_a, scale_b);
        if (r != 0) {
            destroy(lt, p);
            return make_error(fmt::format("cuBLASLt {} refuses the BLK128x128_32F / VEC128_32F scale modes (cublasStatus {})",
                                          lt.label, r));
        }
    }
    CublasLtApi::Handle pref = nullptr;
    CublasLtApi::HeuristicResult result{};
    int found = 0;
    r = lt.cublasLtMatmulPreferenceCreate(&pref);
    if (r == 0)
        r = lt.cublasLtMatmulPreferenceSetAttribute(pref, CublasLtApi::kPrefMaxWorkspaceBytes, &kWorkspaceBytes,
                                                    sizeof kWorkspaceBytes);
    if (r == 0) r = lt.cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.d, p.d, pref, 1, &result, &found);
    if (pref) lt.cublasLtMatmulPreferenceDestroy(pref);
    if (r != 0 || found == 0 || result.state != 0) {
        destroy(lt, p);
        if (r != 0 && r != 15) return failed("cublasLtMatmulAlgoGetHeuristic", r);  // 15: NOT_SUPPORTED
        return make_error(fmt::format("cuBLASLt has no algorithm for a {} of {} on this device", what, extent(dims)));
    }
    p.algo = result.algo;
    return &plans_.emplace(key, p).first->second;
}

Expected<void> LtGemm::enqueue(VendorRoutine routine, const GemmDims& dims, CUdeviceptr a, CUdeviceptr b, CUdeviceptr d,
                               CUdeviceptr scale_a, CUdeviceptr scale_b, CUstream stream) {
    std::string why;
    const CublasLtApi* lt = load_cublaslt(why);
    if (!lt) return make_error(why);
    auto p = plan(*lt, routine, dims, scale_a, scale_b);
    if (!p) return p.error();
    auto ptr = [](CUdeviceptr x) { return reinterpret_cast<void*>(static_cast<uintptr_t>(x)); };
    if (routine == VendorRoutine::gemm_fp8_block) {
        if (int r = set_scale_pointers(*lt, (*p)->op, scale_a, scale_b); r != 0)
            return make_error(fmt::format("cuBLASLt {}: setting the scale pointers failed with cublasStatus {}",
                                          vendor_routine_name(routine), r));
    }
    const float alpha_f = 1, beta_f = 0;
    const int32_t alpha_i = 1, beta_i = 0;
    const bool integer = routine == VendorRoutine::gemm_int8;
    const void* alpha = integer ? static_cast<const void*>(&alpha_i) : &alpha_f;
    const void* beta = integer ? static_cast<const void*>(&beta_i) : &beta_f;
    int r = lt->cublasLtMatmul(handle_, (*p)->op, alpha, ptr(a), (*p)->a, ptr(b), (*p)->b, beta, ptr(d), (*p)->d, ptr(d),
                               (*p)->d, &(*p)->algo, ptr(workspace_), kWorkspaceBytes, stream);
    if (r != 0)
        return make_error(fmt::format("cuBLASLt {} {}: cublasLtMatmul failed with cublasStatus {}",
                                      vendor_routine_name(routine), extent(dims), r));
    return {};
}

void LtGemm::release() {
    std::string why;
    if (const CublasLtApi* lt = (handle_ || !plans_.empty()) ? load_cublaslt(why) : nullptr) {
        for (auto& [key, p] : plans_) destroy(*lt, p);
        if (handle_) lt->cublasLtDestroy(handle_);
    }
    plans_.clear();
    handle_ = nullptr;
    if (workspace_) api_.cuMemFree(workspace_);
    workspace_ = 0;
}

}  // namespace kevo::cuda

#endif
