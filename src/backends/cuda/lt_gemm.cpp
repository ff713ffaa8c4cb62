// See lt_gemm.hpp. Every GEMM is "TN" (A transposed, B not), column-major, square: the layout
// cuBLASLt requires for fp8 and int8 on Hopper, used for bf16 too so the three are alike.
#include "backends/cuda/lt_gemm.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <fmt/format.h>

namespace kevo::cuda {
namespace {

constexpr uint64_t kWorkspaceBytes = 32ull << 20;  // what cuBLASLt's Hopper kernels ask for at most

struct GemmTypes {
    int operand, output, compute, scale;
    uint64_t operand_size, output_size;
};

GemmTypes types_of(VendorRoutine routine) {
    using L = CublasLtApi;
    switch (routine) {
        case VendorRoutine::gemm_fp8: return {L::kR8F_E4M3, L::kR16BF, L::kCompute32F, L::kR32F, 1, 2};
        case VendorRoutine::gemm_int8: return {L::kR8I, L::kR32I, L::kCompute32I, L::kR32I, 1, 4};
        default: return {L::kR16BF, L::kR16BF, L::kCompute32F, L::kR32F, 2, 2};
    }
}

}  // namespace

bool is_gemm(VendorRoutine routine) {
    return routine == VendorRoutine::gemm_bf16 || routine == VendorRoutine::gemm_fp8 || routine == VendorRoutine::gemm_int8;
}

uint64_t gemm_operand_bytes(VendorRoutine routine, uint64_t n) { return n * n * types_of(routine).operand_size; }
uint64_t gemm_output_bytes(VendorRoutine routine, uint64_t n) { return n * n * types_of(routine).output_size; }

void LtGemm::destroy(const CublasLtApi& lt, Plan& p) {
    for (auto* layout : {p.a, p.b, p.d})
        if (layout) lt.cublasLtMatrixLayoutDestroy(layout);
    if (p.op) lt.cublasLtMatmulDescDestroy(p.op);
    p = Plan{};
}

Expected<const LtGemm::Plan*> LtGemm::plan(const CublasLtApi& lt, VendorRoutine routine, uint64_t n) {
    if (auto it = plans_.find({routine, n}); it != plans_.end()) return &it->second;
    const char* what = vendor_routine_name(routine);
    auto failed = [&](const char* call, int status) {
        return make_error(fmt::format("cuBLASLt {} {}^3: {} failed with cublasStatus {}", what, n, call, status));
    };
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
    const auto side = static_cast<int64_t>(n);
    int r = lt.cublasLtMatmulDescCreate(&p.op, t.compute, t.scale);
    if (r == 0) r = lt.cublasLtMatmulDescSetAttribute(p.op, CublasLtApi::kDescTransA, &trans_a, sizeof trans_a);
    if (r == 0) r = lt.cublasLtMatmulDescSetAttribute(p.op, CublasLtApi::kDescTransB, &trans_b, sizeof trans_b);
    if (r == 0) r = lt.cublasLtMatrixLayoutCreate(&p.a, t.operand, n, n, side);
    if (r == 0) r = lt.cublasLtMatrixLayoutCreate(&p.b, t.operand, n, n, side);
    if (r == 0) r = lt.cublasLtMatrixLayoutCreate(&p.d, t.output, n, n, side);
    if (r != 0) {
        destroy(lt, p);
        return failed("creating the descriptors", r);
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
        return make_error(fmt::format("cuBLASLt has no algorithm for a {} of {}^3 on this device", what, n));
    }
    p.algo = result.algo;
    return &plans_.emplace(std::pair{routine, n}, p).first->second;
}

Expected<void> LtGemm::enqueue(VendorRoutine routine, uint64_t n, CUdeviceptr a, CUdeviceptr b, CUdeviceptr d,
                               CUstream stream) {
    std::string why;
    const CublasLtApi* lt = load_cublaslt(why);
    if (!lt) return make_error(why);
    auto p = plan(*lt, routine, n);
    if (!p) return p.error();
    const float alpha_f = 1, beta_f = 0;
    const int32_t alpha_i = 1, beta_i = 0;
    const bool integer = routine == VendorRoutine::gemm_int8;
    const void* alpha = integer ? static_cast<const void*>(&alpha_i) : &alpha_f;
    const void* beta = integer ? static_cast<const void*>(&beta_i) : &beta_f;
    auto ptr = [](CUdeviceptr x) { return reinterpret_cast<void*>(static_cast<uintptr_t>(x)); };
    int r = lt->cublasLtMatmul(handle_, (*p)->op, alpha, ptr(a), (*p)->a, ptr(b), (*p)->b, beta, ptr(d), (*p)->d, ptr(d),
                               (*p)->d, &(*p)->algo, ptr(workspace_), kWorkspaceBytes, stream);
    if (r != 0)
        return make_error(fmt::format("cuBLASLt {} {}^3: cublasLtMatmul failed with cublasStatus {}",
                                      vendor_routine_name(routine), n, r));
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
