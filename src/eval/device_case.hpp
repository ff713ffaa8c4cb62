// One Case resident on a device: every buffer framed by guard zones, a pristine device copy of
// each to restore state and poison outputs between runs, and the checks that run afterwards
// (guards intact, inputs unchanged).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "core/expected.hpp"
#include "eval/directives.hpp"
#include "task/task.hpp"

namespace kevo {

// Bytes before and after every buffer. 64 KiB also satisfies OpenCL sub-buffer alignment.
inline constexpr uint64_t kGuardBytes = 64 * 1024;

class DeviceCase {
public:
    static Expected<DeviceCase> create(Device& device, const Case& c);
    DeviceCase(DeviceCase&& other) noexcept;
    DeviceCase& operator=(DeviceCase&&) = delete;
    ~DeviceCase();

    // Restores state buffers and re-poisons outputs and guards (device-side copies).
    Expected<void> reset();
    // The launches of one run for the compiled kernels and their geometries.
    std::vector<Launch> launches(const Case& c, const std::map<std::string, uint32_t>& kernels,
                                 const std::map<std::string, Geometry>& geometry) const;
    // An empty string when every guard zone is intact, else which buffer and what was overwritten.
    Expected<std::string> check_guards();
    // Names of input buffers whose contents changed.
    Expected<std::vector<std::string>> modified_inputs(const Case& c);
    Expected<std::vector<std::vector<std::byte>>> download_results(const Case& c);

private:
    struct Slot {
        BufferHandle live, pristine;
        uint64_t bytes = 0;  // payload, without guards
        uint64_t input_hash = 0;
        std::string name;
    };
    explicit DeviceCase(Device& device) : device_(&device) {}
    Device* device_;
    std::vector<Slot> slots_;
};

// Poison byte for a buffer's element type: 0xFF makes every float a NaN.
std::byte poison_byte(ElemType type);
inline constexpr std::byte kGuardByte{0xA5};

}  // namespace kevo
