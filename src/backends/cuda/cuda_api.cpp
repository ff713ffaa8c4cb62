// Loads libcuda.so.1 with dlopen and resolves the driver API through cuGetProcAddress_v2.
#include "backends/cuda/cuda_api.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>

#include "backends/cuda/library_paths.hpp"

namespace kevo::cuda {
namespace {

std::string version_text(int version) {
    return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

LoadedApi<DriverApi> load() {
    LoadedApi<DriverApi> out;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* detail = dlerror();
        out.why = fmt::format("libcuda.so.1 not found: no NVIDIA driver ({})", detail ? detail : "dlopen failed");
        return out;
    }
    auto get_proc = reinterpret_cast<decltype(&cuGetProcAddress_v2)>(dlsym(lib, "cuGetProcAddress_v2"));
    auto get_version = reinterpret_cast<decltype(&cuDriverGetVersion)>(dlsym(lib, "cuDriverGetVersion"));
    if (!get_proc || !get_version) {
        out.why = "libcuda.so.1 has no cuGetProcAddress_v2: the NVIDIA driver predates CUDA 12; update it";
        return out;
    }
    int driver_version = 0;
    if (get_version(&driver_version) != CUDA_SUCCESS || driver_version <= 0) {
        out.why = "cuDriverGetVersion failed: the NVIDIA driver is not usable";
        return out;
    }
    // cuGetProcAddress refuses a version above the driver's own. Every function in the table has
    // kept its signature since CUDA 12.0, so an older (12.x) driver is asked for its own version.
    const int request = std::min(CUDA_VERSION, driver_version);
    auto fetch = [&](const char* symbol, void** slot) {
        CUdriverProcAddressQueryResult status{};
        CUresult r = get_proc(symbol, slot, request, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
        if (r != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS) *slot = nullptr;
        return *slot != nullptr;
    };
#define KEVO_CUDA_FETCH(name)                                                      \
    if (!fetch(#name, reinterpret_cast<void**>(&out.api.name)) && out.why.empty()) \
        out.why = fmt::format("the NVIDIA driver (CUDA {}) does not provide {}", version_text(driver_version), #name);
    KEVO_CUDA_DRIVER_FUNCTIONS(KEVO_CUDA_FETCH)
#undef KEVO_CUDA_FETCH
#define KEVO_CUDA_FETCH_OPTIONAL(name) fetch(#name, reinterpret_cast<void**>(&out.api.name));
    KEVO_CUDA_OPTIONAL_FUNCTIONS(KEVO_CUDA_FETCH_OPTIONAL)
#undef KEVO_CUDA_FETCH_OPTIONAL
    out.api.driver_version = driver_version;
    return out;
}

}  // namespace

const DriverApi* load_driver_api(std::string& why) { return load_once<DriverApi, load>(why); }

}  // namespace kevo::cuda

#endif
