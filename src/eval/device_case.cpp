// See device_case.hpp.
#include "eval/device_case.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kevo {

namespace {

uint64_t total_bytes(uint64_t payload) { return payload + 2 * kGuardBytes; }

}  // namespace

// 0xFF bytes are NaN in every float type (f32, f16, bf16, f8e4m3: all exponent bits set, mantissa
// not zero); the int8 types get 127 ((7, 7) in i4x2), a value a kernel that writes nothing is
// unlikely to match by chance.
std::byte poison_byte(ElemType type) {
    return type == ElemType::i8 || type == ElemType::i4x2 ? std::byte{0x7F} : std::byte{0xFF};
}

DeviceCase::Resident::~Resident() {
    for (const auto& s : slots) {
        device->release(s.live);
        device->release(s.pristine);
    }
}

Expected<DeviceCase> DeviceCase::create(Device& device, DeviceChecksum& checksum, const Case& c) {
    auto resident = std::make_shared<Resident>();
    resident->device = &device;
    resident->checksum = &checksum;
    const std::vector<std::byte> guard(kGuardBytes, kGuardByte);
    resident->guard_sum = host_checksum(guard.data(), guard.size(), checksum.key());
    for (const auto& b : c.buffers) {
        Slot slot;
        slot.bytes = b.bytes();
        slot.name = b.name;
        slot.role = b.role;
        auto live = device.allocate(total_bytes(slot.bytes));
        if (!live) return make_error(fmt::format("buffer '{}': {}", b.name, live.error().message));
        slot.live = *live;
        auto pristine = device.allocate(total_bytes(slot.bytes));
        if (!pristine) {
            device.release(slot.live);
            return make_error(fmt::format("buffer '{}' (pristine copy): {}", b.name, pristine.error().message));
        }
        slot.pristine = *pristine;
        resident->slots.push_back(slot);
        // The pristine copy holds guards, then the initial contents or the poison.
        if (auto r = device.upload(slot.pristine, 0, guard.data(), kGuardBytes); !r) return r.error();
        if (auto r = device.upload(slot.pristine, kGuardBytes + slot.bytes, guard.data(), kGuardBytes); !r) return r.error();
        if (b.role == BufferRole::output) {
            const std::vector<std::byte> poison(slot.bytes, poison_byte(b.type));
            if (auto r = device.upload(slot.pristine, kGuardBytes, poison.data(), slot.bytes); !r) return r.error();
        } else {
            if (auto r = device.upload(slot.pristine, kGuardBytes, b.data.data(), slot.bytes); !r) return r.error();
        }
    }
    DeviceCase dc(std::move(resident));
    if (auto r = dc.record_checksums(); !r) return r.error();
    return dc;
}

// The checksums every later check compares with, taken from the device copies just uploaded. One
// guard zone is also checksummed on the device and compared with the host's value: a kernel that
// disagreed with the host would make every later comparison meaningless.
Expected<void> DeviceCase::record_checksums() {
    auto& slots = resident_->slots;
    if (slots.empty()) return {};
    std::vector<ChecksumRegion> regions;
    for (const auto& s : slots) {
        regions.push_back({s.pristine, 0, total_bytes(s.bytes)});
        regions.push_back({s.pristine, kGuardBytes, s.bytes});
    }
    regions.push_back({slots.front().pristine, 0, kGuardBytes});
    auto sums = resident_->checksum->compute(regions);
    if (!sums) return sums.error();
    if (sums->back() != resident_->guard_sum)
        return make_error(fmt::format("the built-in checksum kernel disagrees with the host on a guard zone (device "
                                      "{:016x}, host {:016x}); the device's checksums cannot be trusted",
                                      sums->back(), resident_->guard_sum));
    for (size_t i = 0; i < slots.size(); ++i) {
        slots[i].pristine_sum = (*sums)[2 * i];
        slots[i].payload_sum = (*sums)[2 * i + 1];
    }
    return {};
}

Expected<void> DeviceCase::reset() {
    for (const auto& s : resident_->slots)
        if (auto r = resident_->device->copy(s.live, s.pristine, total_bytes(s.bytes)); !r) return r;
    return {};
}

std::vector<Launch> DeviceCase::launches(const Case& c, const std::map<std::string, uint32_t>& kernels,
                                         const std::map<std::string, Geometry>& geometry) const {
    std::vector<Launch> out;
    out.reserve(c.launches.size());
    for (const auto& spec : c.launches) {
        Launch l;
        l.kernel = kernels.at(spec.kernel);
        const Geometry& g = geometry.at(spec.kernel);
        l.block = g.threads.value_or(g.block);
        l.grid = grid_for(g, spec.domain);
        l.shared_bytes = g.dynamic_shared_bytes;
        for (const auto& a : spec.args) {
            switch (a.kind) {
                case ArgRef::Kind::buffer:
                    l.args.push_back(KernelArg::buf(resident_->slots.at(a.buffer).live, kGuardBytes));
                    break;
                case ArgRef::Kind::f32: l.args.push_back(KernelArg::f(a.f32)); break;
                case ArgRef::Kind::u32: l.args.push_back(KernelArg::u(a.u32)); break;
            }
        }
        for (unsigned i = 0; i < g.null_args; ++i) l.args.push_back(KernelArg::null());
        out.push_back(std::move(l));
    }
    return out;
}

Expected<std::string> DeviceCase::describe_guard(size_t index, int side) {
    const Slot& s = resident_->slots[index];
    std::vector<std::byte> zone(kGuardBytes);
    const uint64_t offset = side == 0 ? 0 : kGuardBytes + s.bytes;
    if (auto r = resident_->device->download(s.live, offset, zone.data(), kGuardBytes); !r) return r.error();
    auto bad = std::find_if(zone.begin(), zone.end(), [](std::byte b) { return b != kGuardByte; });
    const int64_t pos = bad - zone.begin();
    const int64_t changed = std::count_if(zone.begin(), zone.end(), [](std::byte b) { return b != kGuardByte; });
    // The checksum saw a change that the bytes no longer show: the zone changed while it was read.
    if (changed == 0)
        return fmt::format("out-of-bounds write: the guard zone {} buffer '{}' changed", side == 0 ? "before" : "after",
                           s.name);
    return side == 0 ? fmt::format("out-of-bounds write: {} bytes before the start of buffer '{}' were "
                                   "overwritten (the farthest {} bytes before it)", changed, s.name, kGuardBytes - pos)
                     : fmt::format("out-of-bounds write: {} bytes past the end of buffer '{}' were overwritten "
                                   "(the first at byte {} past the end)", changed, s.name, pos);
}

Expected<std::string> DeviceCase::check_guards() {
    const auto& slots = resident_->slots;
    std::vector<ChecksumRegion> regions;
    for (const auto& s : slots) {
        regions.push_back({s.live, 0, kGuardBytes});
        regions.push_back({s.live, kGuardBytes + s.bytes, kGuardBytes});
    }
    auto sums = resident_->checksum->compute(regions);
    if (!sums) return sums.error();
    for (size_t i = 0; i < slots.size(); ++i)
        for (int side = 0; side < 2; ++side)
            if ((*sums)[2 * i + side] != resident_->guard_sum) return describe_guard(i, side);
    return std::string();
}

Expected<std::string> DeviceCase::verify_pristine() {
    const auto& slots = resident_->slots;
    std::vector<ChecksumRegion> regions;
    for (const auto& s : slots) regions.push_back({s.pristine, 0, total_bytes(s.bytes)});
    auto sums = resident_->checksum->compute(regions);
    if (!sums) return sums.error();
    for (size_t i = 0; i < slots.size(); ++i)
        if ((*sums)[i] != slots[i].pristine_sum)
            return fmt::format("out-of-bounds write: kevo's pristine copy of buffer '{}' (from which every run "
                               "restores it) was overwritten", slots[i].name);
    return std::string();
}

Expected<std::vector<std::string>> DeviceCase::modified_inputs(const Case& c) {
    const auto& slots = resident_->slots;
    std::vector<ChecksumRegion> regions;
    std::vector<size_t> inputs;
    for (size_t i = 0; i < slots.size(); ++i) {
        if (c.buffers[i].role != BufferRole::input) continue;
        regions.push_back({slots[i].live, kGuardBytes, slots[i].bytes});
        inputs.push_back(i);
    }
    auto sums = resident_->checksum->compute(regions);
    if (!sums) return sums.error();
    std::vector<std::string> modified;
    for (size_t k = 0; k < inputs.size(); ++k)
        if ((*sums)[k] != slots[inputs[k]].payload_sum) modified.push_back(c.buffers[inputs[k]].name);
    return modified;
}

Expected<std::vector<std::vector<std::byte>>> DeviceCase::download_results(const Case& c) {
    std::vector<std::vector<std::byte>> out;
    for (int index : c.results) {
        const Slot& s = resident_->slots.at(index);
        std::vector<std::byte> data(s.bytes);
        if (auto r = resident_->device->download(s.live, kGuardBytes, data.data(), data.size()); !r) return r.error();
        out.push_back(std::move(data));
    }
    return out;
}

std::vector<ChecksumRegion> DeviceCase::result_regions(const Case& c) const {
    std::vector<ChecksumRegion> regions;
    for (int index : c.results) {
        const Slot& s = resident_->slots.at(index);
        regions.push_back({s.live, kGuardBytes, s.bytes});
    }
    return regions;
}

Expected<void> DeviceCase::remember_results(const Case& c) {
    auto sums = resident_->checksum->compute(result_regions(c));
    if (!sums) return sums.error();
    remembered_ = std::move(*sums);
    return {};
}

Expected<bool> DeviceCase::results_as_remembered(const Case& c) {
    if (!remembered_) return false;
    auto sums = resident_->checksum->compute(result_regions(c));
    if (!sums) return sums.error();
    return *sums == *remembered_;
}

uint64_t DeviceCase::device_bytes() const {
    uint64_t bytes = 0;
    for (const auto& s : resident_->slots) bytes += 2 * total_bytes(s.bytes);
    return bytes;
}

bool DeviceCase::matches(const Case& c) const {
    const auto& slots = resident_->slots;
    if (slots.size() != c.buffers.size()) return false;
    for (size_t i = 0; i < slots.size(); ++i)
        if (slots[i].bytes != c.buffers[i].bytes() || slots[i].role != c.buffers[i].role) return false;
    return true;
}

}  // namespace kevo
