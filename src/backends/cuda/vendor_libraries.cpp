// Loads cuFFT, cuBLAS and cuBLASLt with dlopen (see vendor_libraries.hpp).
#include "backends/cuda/vendor_libraries.hpp"

#include <fmt/format.h>

#include "backends/cuda/library_paths.hpp"

namespace kevo::cuda {
namespace {

LoadedApi<CufftApi> load_cufft_once() {
    LoadedApi<CufftApi> out;
    auto lib = open_cuda_library({"libcufft.so.12", "libcufft.so.11", "libcufft.so"}, "cuFFT");
    if (!lib.handle) return {{}, lib.why};
    fetch_symbol(lib.handle, lib.path, "cufftPlan3d", out.api.cufftPlan3d, out.why);
    fetch_symbol(lib.handle, lib.path, "cufftSetStream", out.api.cufftSetStream, out.why);
    fetch_symbol(lib.handle, lib.path, "cufftExecC2C", out.api.cufftExecC2C, out.why);
    fetch_symbol(lib.handle, lib.path, "cufftDestroy", out.api.cufftDestroy, out.why);
    fetch_symbol(lib.handle, lib.path, "cufftGetVersion", out.api.cufftGetVersion, out.why);
    if (!out.why.empty()) return out;
    int version = 0;
    out.api.cufftGetVersion(&version);
    out.api.label = fmt::format("cuFFT {} ({})", version, lib.path);
    return out;
}

LoadedApi<CublasApi> load_cublas_once() {
    LoadedApi<CublasApi> out;
    auto lib = open_cuda_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, "cuBLAS");
    if (!lib.handle) return {{}, lib.why};
    fetch_symbol(lib.handle, lib.path, "cublasCreate_v2", out.api.cublasCreate_v2, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasSetStream_v2", out.api.cublasSetStream_v2, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasSaxpy_v2", out.api.cublasSaxpy_v2, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasDestroy_v2", out.api.cublasDestroy_v2, out.why);
    out.api.label = fmt::format("cuBLAS ({})", lib.path);
    return out;
}

LoadedApi<CublasLtApi> load_cublaslt_once() {
    LoadedApi<CublasLtApi> out;
    auto lib = open_cuda_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, "cuBLASLt");
    if (!lib.handle) return {{}, lib.why};
    CublasLtApi& a = out.api;
    fetch_symbol(lib.handle, lib.path, "cublasLtCreate", a.cublasLtCreate, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtDestroy", a.cublasLtDestroy, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmulDescCreate", a.cublasLtMatmulDescCreate, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmulDescDestroy", a.cublasLtMatmulDescDestroy, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmulDescSetAttribute", a.cublasLtMatmulDescSetAttribute, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatrixLayoutCreate", a.cublasLtMatrixLayoutCreate, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatrixLayoutDestroy", a.cublasLtMatrixLayoutDestroy, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmulPreferenceCreate", a.cublasLtMatmulPreferenceCreate, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmulPreferenceDestroy", a.cublasLtMatmulPreferenceDestroy, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmulPreferenceSetAttribute", a.cublasLtMatmulPreferenceSetAttribute, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmulAlgoGetHeuristic", a.cublasLtMatmulAlgoGetHeuristic, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtMatmul", a.cublasLtMatmul, out.why);
    fetch_symbol(lib.handle, lib.path, "cublasLtGetVersion", a.cublasLtGetVersion, out.why);
    if (!out.why.empty()) return out;
    a.label = fmt::format("cuBLASLt {} ({})", a.cublasLtGetVersion(), lib.path);
    return out;
}

}  // namespace

const CufftApi* load_cufft(std::string& why) { return load_once<CufftApi, load_cufft_once>(why); }

const CublasApi* load_cublas(std::string& why) { return load_once<CublasApi, load_cublas_once>(why); }

const CublasLtApi* load_cublaslt(std::string& why) { return load_once<CublasLtApi, load_cublaslt_once>(why); }

}  // namespace kevo::cuda
