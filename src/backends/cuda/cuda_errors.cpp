// Readable CUDA driver errors and the list of sticky ones.
#include "backends/cuda/cuda_errors.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <fmt/format.h>

namespace kevo::cuda {

std::string describe(const DriverApi& api, CUresult result) {
    const char* name = nullptr;
    const char* text = nullptr;
    // Both calls leave the pointer null for a code this driver does not know.
    if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
    if (api.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
    std::string out = name ? name : fmt::format("CUDA error {}", static_cast<int>(result));
    if (text) out += fmt::format(": {}", text);
    return out;
}

bool is_sticky(CUresult result) {
    switch (result) {
        case CUDA_ERROR_ILLEGAL_ADDRESS:
        case CUDA_ERROR_LAUNCH_FAILED:
        case CUDA_ERROR_ILLEGAL_INSTRUCTION:
        case CUDA_ERROR_MISALIGNED_ADDRESS:
        case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        case CUDA_ERROR_INVALID_PC:
        case CUDA_ERROR_HARDWARE_STACK_ERROR:
        case CUDA_ERROR_ASSERT:
        case CUDA_ERROR_LAUNCH_TIMEOUT:
        case CUDA_ERROR_ECC_UNCORRECTABLE:
        case CUDA_ERROR_NVLINK_UNCORRECTABLE:
        case CUDA_ERROR_CONTAINED:
        case CUDA_ERROR_TENSOR_MEMORY_LEAK:
        case CUDA_ERROR_EXTERNAL_DEVICE:
        case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        case CUDA_ERROR_DEINITIALIZED:
        case CUDA_ERROR_UNKNOWN:
            return true;
        default:
            return false;
    }
}

}  // namespace kevo::cuda

#endif
