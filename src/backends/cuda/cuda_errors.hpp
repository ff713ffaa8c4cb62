// Turns driver API result codes into readable text and says which ones poison the context.
#pragma once

#include "backends/cuda/cuda_api.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <string>

namespace kevo::cuda {

// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
std::string describe(const DriverApi& api, CUresult result);

// True for the "sticky" errors after which every later call in the context fails and only a new
// process recovers (an illegal address inside a kernel, a device-side assert, ...).
bool is_sticky(CUresult result);

}  // namespace kevo::cuda

#endif
