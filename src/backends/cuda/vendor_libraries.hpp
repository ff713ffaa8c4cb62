// cuFFT and cuBLAS, loaded at run time, for timing vendor peers of suite kernels (`kevo bench`).
// Only the handful of entry points the peers call are declared here, with their C ABI types, so
// kevo needs neither library (nor its headers) to build or to run without them.
#pragma once

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

// Loaded once per process; nullptr with `why` set when the library or an entry point is missing.
const CufftApi* load_cufft(std::string& why);
const CublasApi* load_cublas(std::string& why);

}  // namespace kevo::cuda
