// Finds and opens CUDA toolkit libraries by soname across the usual install folders.
#include "backends/cuda/library_paths.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <vector>

namespace kevo::cuda {

OpenedLibrary open_cuda_library(std::initializer_list<const char*> sonames, const char* what) {
    std::vector<std::string> paths(sonames.begin(), sonames.end());
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* v = std::getenv(var); v && *v) dirs.push_back(fmt::format("{}/lib64", v));
    dirs.emplace_back("/usr/local/cuda/lib64");
    for (const auto& dir : dirs)
        for (const char* name : sonames) paths.push_back(fmt::format("{}/{}", dir, name));

    OpenedLibrary out;
    std::string last_error;
    for (const auto& path : paths) {
        if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            out.handle = lib;
            out.path = path;
            return out;
        }
        if (const char* e = dlerror()) last_error = e;
    }
    out.why = fmt::format("{} not found (tried {}; last error: {}); install the CUDA toolkit or set CUDA_HOME", what,
                          fmt::join(paths, ", "), last_error);
    return out;
}

}  // namespace kevo::cuda
