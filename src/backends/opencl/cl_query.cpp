// Enumerating OpenCL devices and translating clGetDeviceInfo answers into DeviceInfo.
#include "backends/opencl/cl_query.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "backends/opencl/cl_errors.hpp"

namespace kevo::opencl {
namespace {

// Not in CL/cl.h (it lives in cl_ext.h); the ICD loader returns it when no platform is installed.
constexpr cl_int kPlatformNotFoundKhr = -1001;
// Well above the L2 of NVIDIA datacenter GPUs (A100 40 MB, H100/H200 50 MB), with room to spare.
constexpr uint64_t kNvidiaL2Floor = 128ull << 20;

// Driver strings carry their terminating NUL and sometimes padding (Intel pads names with spaces).
std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
    auto first = std::find_if(s.begin(), s.end(), [](unsigned char c) { return !std::isspace(c); });
    s.erase(s.begin(), first);
    return s;
}

std::string device_string(cl_device_id device, cl_device_info what) {
    size_t size = 0;
    if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
    std::string value(size, '\0');
    if (clGetDeviceInfo(device, what, size, value.data(), nullptr) != CL_SUCCESS) return "";
    return trimmed(std::move(value));
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
    size_t size = 0;
    if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
    std::string value(size, '\0');
    if (clGetPlatformInfo(platform, what, size, value.data(), nullptr) != CL_SUCCESS) return "";
    return trimmed(std::move(value));
}

// A scalar property; zero when the driver does not answer (the caller treats 0 as "unknown").
template <class T>
T device_scalar(cl_device_id device, cl_device_info what) {
    T value{};
    if (clGetDeviceInfo(device, what, sizeof(T), &value, nullptr) != CL_SUCCESS) return T{};
    return value;
}

}  // namespace

std::vector<DeviceRef> enumerate_devices(std::string& why_empty) {
    std::vector<DeviceRef> refs;
    cl_uint platform_count = 0;
    cl_int status = clGetPlatformIDs(0, nullptr, &platform_count);
    if (status == kPlatformNotFoundKhr || (status == CL_SUCCESS && platform_count == 0)) {
        why_empty = "no OpenCL platform found (is an ICD installed, e.g. pocl-opencl-icd?)";
        return refs;
    }
    if (status != CL_SUCCESS) {
        why_empty = fmt::format("clGetPlatformIDs failed: {}", error_text(status));
        return refs;
    }
    std::vector<cl_platform_id> platforms(platform_count);
    status = clGetPlatformIDs(platform_count, platforms.data(), nullptr);
    if (status != CL_SUCCESS) {
        why_empty = fmt::format("clGetPlatformIDs failed: {}", error_text(status));
        return refs;
    }

    std::string platform_errors;
    for (cl_platform_id platform : platforms) {
        cl_uint device_count = 0;
        status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count);
        if (status == CL_DEVICE_NOT_FOUND || (status == CL_SUCCESS && device_count == 0)) continue;
        std::vector<cl_device_id> devices(device_count);
        if (status == CL_SUCCESS) status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, device_count, devices.data(), nullptr);
        if (status != CL_SUCCESS) {
            // One broken platform must not hide the devices of the others.
            platform_errors += fmt::format("; platform '{}': clGetDeviceIDs failed: {}",
                                           platform_string(platform, CL_PLATFORM_NAME), error_text(status));
            continue;
        }
        for (cl_device_id device : devices) refs.push_back({platform, device});
    }
    if (refs.empty())
        why_empty = fmt::format("{} OpenCL platform(s) found but no device{}", platform_count, platform_errors);
    return refs;
}

DeviceInfo describe_device(const DeviceRef& ref, int index) {
    const cl_device_id d = ref.device;
    DeviceInfo info;
    info.backend = "opencl";
    info.index = index;
    info.name = device_string(d, CL_DEVICE_NAME);
    info.vendor = device_string(d, CL_DEVICE_VENDOR);
    // The driver version alone is ambiguous across implementations ("3.1" from PoCL vs from
    // another vendor); with the platform name the pair keys the calibration cache.
    info.driver = fmt::format("{} ({})", device_string(d, CL_DRIVER_VERSION),
                              platform_string(ref.platform, CL_PLATFORM_NAME));
    info.arch = device_string(d, CL_DEVICE_OPENCL_C_VERSION);
    info.is_cpu = (device_scalar<cl_device_type>(d, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
    info.compute_units = static_cast<int>(device_scalar<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS));
    info.global_mem_bytes = device_scalar<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    info.max_alloc_bytes = device_scalar<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    info.l2_bytes = device_scalar<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    // Some drivers report no cache; 32 MiB keeps the L2 flush large enough for most devices.
    if (info.l2_bytes == 0) info.l2_bytes = 32ull << 20;
    // NVIDIA's OpenCL reports the summed per-SM L1 here, not the L2 (an H200 says 4,325,376 =
    // 132 x 32 KiB against a 50 MB L2), and OpenCL has no L2 query. Since this number sizes the
    // L2 flush, overestimating only costs a longer flush while underestimating corrupts timings.
    if (!info.is_cpu && info.vendor.find("NVIDIA") != std::string::npos)
        info.l2_bytes = std::max<uint64_t>(info.l2_bytes, kNvidiaL2Floor);
    info.shared_mem_per_block = device_scalar<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
    info.max_threads_per_block = static_cast<unsigned>(device_scalar<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE));

    const cl_uint dims = device_scalar<cl_uint>(d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
    std::vector<size_t> item_sizes(std::max<cl_uint>(dims, 3), 1);
    if (dims == 0 ||
        clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(size_t), item_sizes.data(), nullptr) != CL_SUCCESS)
        std::fill(item_sizes.begin(), item_sizes.end(), size_t{1});
    for (int axis = 0; axis < 3; ++axis) info.max_block[axis] = item_sizes[axis];
    // OpenCL bounds the global size only by size_t; 2^31-1 keeps grid*block sane for callers.
    info.max_grid = {(1ull << 31) - 1, (1ull << 31) - 1, (1ull << 31) - 1};
    info.clock_mhz = static_cast<int>(device_scalar<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY));
    return info;
}

uint64_t base_address_alignment_bytes(cl_device_id device) {
    const cl_uint bits = device_scalar<cl_uint>(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
    return std::max<uint64_t>(bits / 8, 1);
}

}  // namespace kevo::opencl
