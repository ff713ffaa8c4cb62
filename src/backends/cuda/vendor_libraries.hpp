// cuFFT, cuBLAS and cuBLASLt, loaded at run time, for timing vendor peers of suite kernels (`kevo
// bench`) and the GEMMs that measure the tensor-core ceilings (calibration).
// Only the handful of entry points the peers call are declared here, with their C ABI types, so
// kevo needs neither library (nor its headers) to build or to run without them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kevo::cuda {

struct CufftApi {
    using Handle = int;
    int (*cufftPlan3d)(Handle* plan, int nx, int ny, int nz, int type) = nullptr;
    int (*cufftSetStream)(Handle plan, void* stream) = nullptr;
    int (*cufftExecC2C)(Handle plan, void* in, void* out, int direction) = nullptr;
    int (*cufftDestroy)(Handle plan) = nullptr;
    int (*cufftGetVersion)(int* version) = nullptr;
    static constexpr int kC2C = 0x29;     // CUFFT_C2C
    static constexpr int kForward = -1;   // CUFFT_FORWARD
    std::string label;                    // "cuFFT 12.0.0 (path)"
};

struct CublasApi {
    using Handle = void*;
    int (*cublasCreate_v2)(Handle* handle) = nullptr;
    int (*cublasSetStream_v2)(Handle handle, void* stream) = nullptr;
    int (*cublasSaxpy_v2)(Handle handle, int n, const float* alpha, const float* x, int incx, float* y, int incy) = nullptr;
    int (*cublasDestroy_v2)(Handle handle) = nullptr;
    std::string label;  // "cuBLAS (path)"
};

// The cuBLASLt matmul entry points; opaque handles are void*, enums int (values from library_types.h,
// cublas_api.h and cublasLt.h, checked against those headers in tests where they are installed).
struct CublasLtApi {
    using Handle = void*;
    struct Algo {
        uint64_t data[8];
    };
    struct HeuristicResult {  // cublasLtMatmulHeuristicResult_t
        Algo algo;
        size_t workspace_size;
        int state;
        float waves_count;
        int reserved[4];
    };
    int (*cublasLtCreate)(Handle* handle) = nullptr;
    int (*cublasLtDestroy)(Handle handle) = nullptr;
    int (*cublasLtMatmulDescCreate)(Handle* desc, int compute_type, int scale_type) = nullptr;
    int (*cublasLtMatmulDescDestroy)(Handle desc) = nullptr;
    int (*cublasLtMatmulDescSetAttribute)(Handle desc, int attribute, const void* buf, size_t size) = nullptr;
    int (*cublasLtMatrixLayoutCreate)(Handle* layout, int type, uint64_t rows, uint64_t cols, int64_t ld) = nullptr;
    int (*cublasLtMatrixLayoutDestroy)(Handle layout) = nullptr;
    int (*cublasLtMatmulPreferenceCreate)(Handle* pref) = nullptr;
    int (*cublasLtMatmulPreferenceDestroy)(Handle pref) = nullptr;
    int (*cublasLtMatmulPreferenceSetAttribute)(Handle pref, int attribute, const void* buf, size_t size) = nullptr;
    int (*cublasLtMatmulAlgoGetHeuristic)(Handle handle, Handle op, Handle a, Handle b, Handle c, Handle d, Handle pref,
                                          int requested, HeuristicResult* results, int* returned) = nullptr;
    int (*cublasLtMatmul)(Handle handle, Handle op, const void* alpha, const void* a, Handle a_desc, const void* b,
                          Handle b_desc, const void* beta, const void* c, Handle c_desc, void* d, Handle d_desc,
                          const Algo* algo, void* workspace, size_t workspace_size, void* stream) = nullptr;
    size_t (*cublasLtGetVersion)() = nullptr;

    static constexpr int kR32F = 0, kR8I = 3, kR32I = 10, kR16BF = 14, kR8F_E4M3 = 28;  // cudaDataType
    static constexpr int kCompute32F = 68, kCompute32I = 72;                            // cublasComputeType_t
    static constexpr int kOpN = 0, kOpT = 1;                                            // cublasOperation_t
    static constexpr int kDescTransA = 3, kDescTransB = 4;                              // cublasLtMatmulDescAttributes_t
    static constexpr int kPrefMaxWorkspaceBytes = 1;                                    // cublasLtMatmulPreferenceAttributes_t
    // Block scaling (cuBLASLt 12.9+): the scale pointers and modes of A and B (cublasLtMatmulDescAttributes_t)
    // and the two modes the DeepSeek-V3 recipe needs (cublasLtMatmulMatrixScale_t).
    static constexpr int kDescAScalePointer = 17, kDescBScalePointer = 18, kDescAScaleMode = 31, kDescBScaleMode = 32;
    static constexpr int kScaleVec128_32F = 4, kScaleBlk128x128_32F = 5;
    std::string label;  // "cuBLASLt 130000 (path)"
};

// Loaded once per process; nullptr with `why` set when the library or an entry point is missing.
const CufftApi* load_cufft(std::string& why);
const CublasApi* load_cublas(std::string& why);
const CublasLtApi* load_cublaslt(std::string& why);

}  // namespace kevo::cuda
