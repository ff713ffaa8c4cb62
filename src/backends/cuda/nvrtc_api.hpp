// NVRTC as a table of function pointers, loaded at run time so that nothing links against it.
#pragma once

#include "backends/cuda/cuda_headers.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <string>

namespace kevo::cuda {

#define KEVO_NVRTC_FUNCTIONS(X)                                                                \
    X(nvrtcVersion)                                                                            \
    X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) \
        X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)

// Present in every NVRTC that can produce a CUBIN, but only used to give a clearer message.
#define KEVO_NVRTC_OPTIONAL_FUNCTIONS(X) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)

struct NvrtcApi {
#define KEVO_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
    KEVO_NVRTC_FUNCTIONS(KEVO_NVRTC_MEMBER)
    KEVO_NVRTC_OPTIONAL_FUNCTIONS(KEVO_NVRTC_MEMBER)
#undef KEVO_NVRTC_MEMBER
    int major = 0, minor = 0;
    std::string path;  // the library that was loaded
};

// Loads libnvrtc once per process: libnvrtc.so.13, .so.12 and .so through the loader's search path,
// then from $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64. Returns nullptr and sets
// `why` when none loads.
const NvrtcApi* load_nvrtc_api(std::string& why);

}  // namespace kevo::cuda

#endif
