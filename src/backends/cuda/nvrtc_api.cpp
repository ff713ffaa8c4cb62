// Finds and loads libnvrtc with dlopen.
#include "backends/cuda/nvrtc_api.hpp"
#include "backends/cuda/library_paths.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <climits>

namespace kevo::cuda {
namespace {

// NVRTC opens libnvrtc-builtins by its soname at the first compilation, which fails when NVRTC was
// found by absolute path outside the loader's search path. Loading the builtins from the same folder
// first makes that later lookup find the library already in memory.
void preload_builtins(void* lib, const NvrtcApi& api) {
    char origin[PATH_MAX] = {};
    if (dlinfo(lib, RTLD_DI_ORIGIN, origin) != 0) return;
    auto path = fmt::format("{}/libnvrtc-builtins.so.{}.{}", origin, api.major, api.minor);
    if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) dlerror();  // absent is fine: NVRTC may still find it
}

LoadedApi<NvrtcApi> load() {
    LoadedApi<NvrtcApi> out;
    auto opened = open_cuda_library({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, "NVRTC");
    if (!opened.handle) {
        out.why = opened.why;
        return out;
    }
    void* lib = opened.handle;
    out.api.path = opened.path;
#define KEVO_NVRTC_FETCH(name) fetch_symbol(lib, out.api.path, #name, out.api.name, out.why);
    KEVO_NVRTC_FUNCTIONS(KEVO_NVRTC_FETCH)
#undef KEVO_NVRTC_FETCH
#define KEVO_NVRTC_FETCH_OPTIONAL(name) out.api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));
    KEVO_NVRTC_OPTIONAL_FUNCTIONS(KEVO_NVRTC_FETCH_OPTIONAL)
#undef KEVO_NVRTC_FETCH_OPTIONAL
    if (!out.why.empty()) return out;
    if (out.api.nvrtcVersion(&out.api.major, &out.api.minor) != NVRTC_SUCCESS) {
        out.why = fmt::format("nvrtcVersion failed in {}", out.api.path);
        return out;
    }
    preload_builtins(lib, out.api);
    return out;
}

}  // namespace

const NvrtcApi* load_nvrtc_api(std::string& why) { return load_once<NvrtcApi, load>(why); }

}  // namespace kevo::cuda

#endif
