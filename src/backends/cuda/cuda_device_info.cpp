// DeviceInfo from cuDeviceGetAttribute and friends.
#include "backends/cuda/cuda_device_info.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <fmt/format.h>

#include "backends/cuda/cuda_errors.hpp"

namespace kevo::cuda {

Expected<DeviceInfo> query_device_info(const DriverApi& api, int index) {
    CUdevice device = 0;
    if (CUresult r = api.cuDeviceGet(&device, index); r != CUDA_SUCCESS)
        return make_error(fmt::format("cuDeviceGet({}) failed: {}", index, describe(api, r)));

    char name[256] = {};
    if (CUresult r = api.cuDeviceGetName(name, sizeof(name) - 1, device); r != CUDA_SUCCESS)
        return make_error(fmt::format("cuDeviceGetName({}) failed: {}", index, describe(api, r)));
    size_t total = 0;
    if (CUresult r = api.cuDeviceTotalMem(&total, device); r != CUDA_SUCCESS)
        return make_error(fmt::format("cuDeviceTotalMem({}) failed: {}", index, describe(api, r)));

    std::string failed;
    auto attribute = [&](CUdevice_attribute which) -> int {
        int value = 0;
        if (CUresult r = api.cuDeviceGetAttribute(&value, which, device); r != CUDA_SUCCESS) {
            if (failed.empty()) failed = fmt::format("attribute {}: {}", static_cast<int>(which), describe(api, r));
            return 0;
        }
        return value;
    };
    auto u64 = [&](CUdevice_attribute which) { return static_cast<uint64_t>(attribute(which)); };

    DeviceInfo info;
    info.backend = "cuda";
    info.index = index;
    info.name = name;
    info.vendor = "NVIDIA";
    info.driver = fmt::format("{}.{}", api.driver_version / 1000, (api.driver_version % 1000) / 10);
    info.arch = fmt::format("sm_{}{}", attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                            attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    info.is_cpu = false;
    info.compute_units = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info.global_mem_bytes = total;
    info.max_alloc_bytes = total;  // CUDA has no per-allocation cap below the memory size
    info.l2_bytes = u64(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    info.shared_mem_per_block = u64(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    info.max_threads_per_block = static_cast<unsigned>(attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
    info.max_block = {u64(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), u64(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                      u64(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    info.max_grid = {u64(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), u64(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                     u64(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    info.clock_mhz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;  // reported in kHz
    if (!failed.empty())
        return make_error(fmt::format("reading CUDA device {} ({}) failed at {}", index, name, failed));
    return info;
}

}  // namespace kevo::cuda

#endif
