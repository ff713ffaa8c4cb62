// The CUDA driver API as a table of function pointers, filled at run time from libcuda.so.1
// through cuGetProcAddress so that kevo runs (with zero CUDA devices) where no driver is installed.
#pragma once

#include "backends/cuda/cuda_headers.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <string>

namespace kevo::cuda {

// Every entry point the backend calls. The X-macro keeps the member list and the lookup in step;
// decltype(&::name) follows cuda.h's #defines, so the pointer type is the versioned (_v2, ...) one
// that cuGetProcAddress hands out for the base name.
#define KEVO_CUDA_DRIVER_FUNCTIONS(X)                                                                                 \
    X(cuInit)                                                                                                         \
    X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) \
        X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)          \
            X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate)           \
                X(cuEventDestroy) X(cuEventRecord) X(cuEventElapsedTime) X(cuModuleLoadData) X(cuModuleUnload)        \
                    X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync)      \
                        X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuLaunchKernel) X(cuMemHostAlloc)                 \
                            X(cuMemFreeHost) X(cuEventSynchronize) X(cuStreamBeginCapture) X(cuStreamEndCapture)  \
                                X(cuGraphInstantiateWithFlags) X(cuGraphUpload) X(cuGraphLaunch)                  \
                                    X(cuGraphExecDestroy) X(cuGraphDestroy)

// Entry points newer than the oldest driver we accept (CUDA 12.0); null where the driver lacks them.
#define KEVO_CUDA_OPTIONAL_FUNCTIONS(X) X(cuFuncGetParamInfo)

struct DriverApi {
#define KEVO_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
    KEVO_CUDA_DRIVER_FUNCTIONS(KEVO_CUDA_MEMBER)
    KEVO_CUDA_OPTIONAL_FUNCTIONS(KEVO_CUDA_MEMBER)
#undef KEVO_CUDA_MEMBER
    int driver_version = 0;  // as cuDriverGetVersion reports it: 1000 * major + 10 * minor
};

// Loads libcuda.so.1 once per process (it is never unloaded). Returns nullptr when the driver is
// missing or unusable and then sets `why` to a sentence saying so.
const DriverApi* load_driver_api(std::string& why);

}  // namespace kevo::cuda

#endif
