// One Case resident on a device: every buffer framed by guard zones, a pristine device copy of
// each to restore state and poison outputs between runs, and the checks that run afterwards
// (guards intact, inputs unchanged, pristine copies untouched). The checks compare device-side
// checksums (DeviceChecksum) with those recorded at creation, so that nothing is downloaded unless
// something changed. A DeviceCase is a handle: copies share the same device buffers, which are
// released with the last copy (DeviceCaseCache keeps one while runners use others).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "core/expected.hpp"
#include "eval/device_checksum.hpp"
#include "eval/directives.hpp"
#include "task/task.hpp"

namespace kevo {

// Bytes before and after every buffer. 64 KiB also satisfies OpenCL sub-buffer alignment.
inline constexpr uint64_t kGuardBytes = 64 * 1024;

class DeviceCase {
public:
    // Allocates and uploads every buffer of `c`; `checksum` must outlive the case.
    static Expected<DeviceCase> create(Device& device, DeviceChecksum& checksum, const Case& c);

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

    // An empty string when every pristine copy still holds what it held at creation, else which
    // buffer's copy changed. A candidate may write anywhere in device memory: into the pristine
    // copies of a resident case (checked before the case is used again) or of its own (checked
    // after its timed runs, which such a write could otherwise short-cut).
    Expected<std::string> verify_pristine();
    // Records the checksums of the result buffers as they are now (after a run whose output was
    // checked); results_as_remembered then says whether they are still bit-identical to that
    // output, which makes a later download and check unnecessary. False when nothing was recorded
    // through this handle.
    Expected<void> remember_results(const Case& c);
    Expected<bool> results_as_remembered(const Case& c);

    // Device memory held (live and pristine copies, guards included).
    uint64_t device_bytes() const;
    // Whether this case was built from a host case with the same buffer sizes.
    bool matches(const Case& c) const;
    // The pristine copy of buffer `index` (tests corrupt it to see the corruption caught).
    BufferHandle pristine(size_t index) const { return resident_->slots.at(index).pristine; }

private:
    struct Slot {
        BufferHandle live, pristine;
        uint64_t bytes = 0;  // payload, without guards
        std::string name;
        BufferRole role = BufferRole::input;
        uint64_t pristine_sum = 0;  // the whole pristine copy, guards included, at creation
        uint64_t payload_sum = 0;   // its payload: the initial contents (or the poison)
    };
    // The device buffers, shared by every copy of the handle.
    struct Resident {
        Device* device = nullptr;
        DeviceChecksum* checksum = nullptr;
        std::vector<Slot> slots;
        uint64_t guard_sum = 0;  // the checksum of one intact guard zone
        ~Resident();
    };
    explicit DeviceCase(std::shared_ptr<Resident> resident) : resident_(std::move(resident)) {}
    Expected<void> record_checksums();
    // What is wrong with guard zone `side` (0: before, 1: after) of slot `index`, from its bytes.
    Expected<std::string> describe_guard(size_t index, int side);
    std::vector<ChecksumRegion> result_regions(const Case& c) const;

    std::shared_ptr<Resident> resident_;
    std::optional<std::vector<uint64_t>> remembered_;
};

// Poison byte for a buffer's element type: 0xFF makes every float a NaN.
std::byte poison_byte(ElemType type);
inline constexpr std::byte kGuardByte{0xA5};

}  // namespace kevo
