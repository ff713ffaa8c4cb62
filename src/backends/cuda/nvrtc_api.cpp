// Finds and loads libnvrtc with dlopen.
#include "backends/cuda/nvrtc_api.hpp"
#include "backends/cuda/library_paths.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace kevo::cuda {
namespace {

// NVRTC opens libnvrtc-builtins by its soname at the first compilation, which fails when NVRTC was
// found by absolute path outside the loader's search path. Loading the builtins from the same folder
// first makes that later lookup find the library already in memory.
void preload_builtins(const std::string& origin, const NvrtcApi& api) {
    if (origin.empty()) return;
    auto path = fmt::format("{}/libnvrtc-builtins.so.{}.{}", origin, api.major, api.minor);
    if (!dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) dlerror();  // absent is fine: NVRTC may still find it
}

std::string library_folder(void* lib) {
    char origin[PATH_MAX] = {};
    if (dlinfo(lib, RTLD_DI_ORIGIN, origin) != 0) return {};
    return origin;
}

// The headers of the toolkit this NVRTC came with first (lib/ or lib64/ beside include/), then the
// usual install folders. cuda_fp16.h stands for the set: the toolkit ships them together.
std::string find_include_dir(const std::string& origin) {
    std::vector<std::filesystem::path> dirs;
    if (!origin.empty()) dirs.push_back(std::filesystem::path(origin).parent_path() / "include");
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::filesystem::path(v) / "include");
    dirs.emplace_back("/usr/local/cuda/include");
    std::error_code ec;
    for (const auto& dir : dirs)
        if (std::filesystem::is_regular_file(dir / "cuda_fp16.h", ec)) return dir.lexically_normal().string();
    return {};
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
    const std::string origin = library_folder(lib);
    preload_builtins(origin, out.api);
    out.api.include_dir = find_include_dir(origin);
    return out;
}

}  // namespace

const NvrtcApi* load_nvrtc_api(std::string& why) { return load_once<NvrtcApi, load>(why); }

}  // namespace kevo::cuda

#endif
