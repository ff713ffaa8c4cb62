// Reads a CUDA device's name, limits and sizes into a DeviceInfo.
#pragma once

#include "backend/backend.hpp"
#include "backends/cuda/cuda_api.hpp"

#if KEVO_HAVE_CUDA_HEADERS

namespace kevo::cuda {

// The driver must be initialised (cuInit) before this is called.
Expected<DeviceInfo> query_device_info(const DriverApi& api, int index);

}  // namespace kevo::cuda

#endif
