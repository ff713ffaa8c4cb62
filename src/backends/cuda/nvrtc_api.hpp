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
    // The toolkit's include folder, where the allow-listed headers (cuda_fp16.h, mma.h, ...) live:
    // NVRTC 13 builds none of them in. Empty when no folder beside NVRTC or under $CUDA_HOME,
    // $CUDA_PATH or /usr/local/cuda holds them; an include then fails as a compile error.
    std::string include_dir;
};

// Loads libnvrtc once per process: libnvrtc.so.13, .so.12 and .so through the loader's search path,
// then from $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64. Returns nullptr and sets
// `why` when none loads.
const NvrtcApi* load_nvrtc_api(std::string& why);

}  // namespace kevo::cuda

#endif
