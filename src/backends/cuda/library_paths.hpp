// Finds CUDA toolkit libraries (NVRTC, cuFFT, cuBLAS) for dlopen: the loader's own search path
// first, then $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64. Also the pieces every
// such loader shares: fetching entry points and loading once per process.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <mutex>
#include <string>

namespace kevo::cuda {

struct OpenedLibrary {
    void* handle = nullptr;  // never closed: the library stays loaded for the process
    std::string path;        // what was opened
    std::string why;         // when handle is null: every path tried and the last loader error
};

OpenedLibrary open_cuda_library(std::initializer_list<const char*> sonames, const char* what);

// Fills one entry point from `lib`; leaves `why` naming the first that is missing.
template <class F>
void fetch_symbol(void* lib, const std::string& path, const char* name, F& slot, std::string& why) {
    slot = reinterpret_cast<F>(dlsym(lib, name));
    if (!slot && why.empty()) why = path + " has no " + name;
}

// A library's entry points, or why they could not be loaded.
template <class Api>
struct LoadedApi {
    Api api;
    std::string why;
};

// Runs `Load` at most once per process, on first use; nullptr with `why` set when it failed.
template <class Api, LoadedApi<Api> (*Load)()>
const Api* load_once(std::string& why) {
    static std::once_flag once;
    static LoadedApi<Api> loaded;
    std::call_once(once, [] { loaded = Load(); });
    why = loaded.why;
    return loaded.why.empty() ? &loaded.api : nullptr;
}

}  // namespace kevo::cuda
