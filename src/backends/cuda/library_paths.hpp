// Finds CUDA toolkit libraries (NVRTC, cuFFT, cuBLAS) for dlopen: the loader's own search path
// first, then $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
#pragma once

#include <initializer_list>
#include <string>

namespace kevo::cuda {

struct OpenedLibrary {
    void* handle = nullptr;  // never closed: the library stays loaded for the process
    std::string path;        // what was opened
    std::string why;         // when handle is null: every path tried and the last loader error
};

OpenedLibrary open_cuda_library(std::initializer_list<const char*> sonames, const char* what);

}  // namespace kevo::cuda
