// Enumerating OpenCL devices and reading their properties into kevo's DeviceInfo.
#pragma once

#include <CL/cl.h>

#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "core/expected.hpp"

namespace kevo::opencl {

struct DeviceRef {
    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
};

// Every device of every platform, platform order then device order (the index kevo shows).
// An empty list is not an error: `why_empty` then says why (no ICD, no device, a driver error).
std::vector<DeviceRef> enumerate_devices(std::string& why_empty);

// Reads the device's name, limits and caches; `index` is its position in enumerate_devices().
DeviceInfo describe_device(const DeviceRef& ref, int index);

// CL_DEVICE_MEM_BASE_ADDR_ALIGN converted from bits to bytes (at least 1).
uint64_t base_address_alignment_bytes(cl_device_id device);

}  // namespace kevo::opencl
