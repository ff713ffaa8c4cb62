// Loads cuFFT and cuBLAS with dlopen (see vendor_libraries.hpp).
#include "backends/cuda/vendor_libraries.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "backends/cuda/library_paths.hpp"

namespace kevo::cuda {
namespace {

template <class Api>
struct Loaded {
    Api api;
    std::string why;
};

// Fills one entry point; leaves `why` naming the first that is missing.
template <class F>
void fetch(void* lib, const std::string& path, const char* name, F& slot, std::string& why) {
    slot = reinterpret_cast<F>(dlsym(lib, name));
    if (!slot && why.empty()) why = fmt::format("{} has no {}", path, name);
}

Loaded<CufftApi> load_cufft_once() {
    Loaded<CufftApi> out;
    auto lib = open_cuda_library({"libcufft.so.12", "libcufft.so.11", "libcufft.so"}, "cuFFT");
    if (!lib.handle) return {{}, lib.why};
    fetch(lib.handle, lib.path, "cufftPlan3d", out.api.cufftPlan3d, out.why);
    fetch(lib.handle, lib.path, "cufftSetStream", out.api.cufftSetStream, out.why);
    fetch(lib.handle, lib.path, "cufftExecC2C", out.api.cufftExecC2C, out.why);
    fetch(lib.handle, lib.path, "cufftDestroy", out.api.cufftDestroy, out.why);
    fetch(lib.handle, lib.path, "cufftGetVersion", out.api.cufftGetVersion, out.why);
    if (!out.why.empty()) return out;
    int version = 0;
    out.api.cufftGetVersion(&version);
    out.api.label = fmt::format("cuFFT {} ({})", version, lib.path);
    return out;
}

Loaded<CublasApi> load_cublas_once() {
    Loaded<CublasApi> out;
    auto lib = open_cuda_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, "cuBLAS");
    if (!lib.handle) return {{}, lib.why};
    fetch(lib.handle, lib.path, "cublasCreate_v2", out.api.cublasCreate_v2, out.why);
    fetch(lib.handle, lib.path, "cublasSetStream_v2", out.api.cublasSetStream_v2, out.why);
    fetch(lib.handle, lib.path, "cublasSaxpy_v2", out.api.cublasSaxpy_v2, out.why);
    fetch(lib.handle, lib.path, "cublasDestroy_v2", out.api.cublasDestroy_v2, out.why);
    out.api.label = fmt::format("cuBLAS ({})", lib.path);
    return out;
}

// Each library is loaded at most once per process, on first use.
template <class Api, Loaded<Api> (*Load)()>
const Api* load_once(std::string& why) {
    static std::once_flag once;
    static Loaded<Api> loaded;
    std::call_once(once, [] { loaded = Load(); });
    why = loaded.why;
    return loaded.why.empty() ? &loaded.api : nullptr;
}

}  // namespace

const CufftApi* load_cufft(std::string& why) { return load_once<CufftApi, load_cufft_once>(why); }

const CublasApi* load_cublas(std::string& why) { return load_once<CublasApi, load_cublas_once>(why); }

}  // namespace kevo::cuda
