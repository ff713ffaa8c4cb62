// See device_case.hpp.
#include "eval/device_case.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/hash.hpp"

namespace kevo {

std::byte poison_byte(ElemType type) { return type == ElemType::i8 ? std::byte{0x7F} : std::byte{0xFF}; }

Expected<DeviceCase> DeviceCase::create(Device& device, const Case& c) {
    DeviceCase dc(device);
    const std::vector<std::byte> guard(kGuardBytes, kGuardByte);
    for (const auto& b : c.buffers) {
        Slot slot;
        slot.bytes = b.bytes();
        slot.name = b.name;
        const uint64_t total = slot.bytes + 2 * kGuardBytes;
        auto live = device.allocate(total);
        if (!live) return make_error(fmt::format("buffer '{}': {}", b.name, live.error().message));
        slot.live = *live;
        auto pristine = device.allocate(total);
        if (!pristine) {
            device.release(slot.live);
            return make_error(fmt::format("buffer '{}' (pristine copy): {}", b.name, pristine.error().message));
        }
        slot.pristine = *pristine;
        dc.slots_.push_back(slot);
        // The pristine copy holds guards, then the initial contents or the poison.
        if (auto r = device.upload(slot.pristine, 0, guard.data(), kGuardBytes); !r) return r.error();
        if (auto r = device.upload(slot.pristine, kGuardBytes + slot.bytes, guard.data(), kGuardBytes); !r) return r.error();
        if (b.role == BufferRole::output) {
            const std::vector<std::byte> poison(slot.bytes, poison_byte(b.type));
            if (auto r = device.upload(slot.pristine, kGuardBytes, poison.data(), slot.bytes); !r) return r.error();
        } else {
            if (auto r = device.upload(slot.pristine, kGuardBytes, b.data.data(), slot.bytes); !r) return r.error();
        }
        if (b.role == BufferRole::input) dc.slots_.back().input_hash = hash_bytes_parallel(b.data.data(), b.bytes());
    }
    return dc;
}

DeviceCase::DeviceCase(DeviceCase&& other) noexcept : device_(other.device_), slots_(std::move(other.slots_)) {
    other.slots_.clear();
}

DeviceCase::~DeviceCase() {
    for (const auto& s : slots_) {
        device_->release(s.live);
        device_->release(s.pristine);
    }
}

Expected<void> DeviceCase::reset() {
    for (const auto& s : slots_)
        if (auto r = device_->copy(s.live, s.pristine, s.bytes + 2 * kGuardBytes); !r) return r;
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
        l.block = g.block;
        l.grid = grid_for(g, spec.domain);
        for (const auto& a : spec.args) {
            switch (a.kind) {
                case ArgRef::Kind::buffer: l.args.push_back(KernelArg::buf(slots_.at(a.buffer).live, kGuardBytes)); break;
                case ArgRef::Kind::f32: l.args.push_back(KernelArg::f(a.f32)); break;
                case ArgRef::Kind::u32: l.args.push_back(KernelArg::u(a.u32)); break;
            }
        }
        out.push_back(std::move(l));
    }
    return out;
}

Expected<std::string> DeviceCase::check_guards() {
    std::vector<std::byte> zone(kGuardBytes);
    for (size_t i = 0; i < slots_.size(); ++i) {
        const auto& s = slots_[i];
        for (int side = 0; side < 2; ++side) {
            const uint64_t offset = side == 0 ? 0 : kGuardBytes + s.bytes;
            if (auto r = device_->download(s.live, offset, zone.data(), kGuardBytes); !r) return r.error();
            auto bad = std::find_if(zone.begin(), zone.end(), [](std::byte b) { return b != kGuardByte; });
            if (bad == zone.end()) continue;
            const int64_t pos = bad - zone.begin();
            const int64_t changed = std::count_if(zone.begin(), zone.end(), [](std::byte b) { return b != kGuardByte; });
            return side == 0 ? fmt::format("out-of-bounds write: {} bytes before the start of buffer '{}' were "
                                           "overwritten (the farthest {} bytes before it)", changed, s.name, kGuardBytes - pos)
                             : fmt::format("out-of-bounds write: {} bytes past the end of buffer '{}' were overwritten "
                                           "(the first at byte {} past the end)", changed, s.name, pos);
        }
    }
    return std::string();
}

Expected<std::vector<std::string>> DeviceCase::modified_inputs(const Case& c) {
    std::vector<std::string> modified;
    std::vector<std::byte> data;
    for (size_t i = 0; i < slots_.size(); ++i) {
        if (c.buffers[i].role != BufferRole::input) continue;
        data.resize(slots_[i].bytes);
        if (auto r = device_->download(slots_[i].live, kGuardBytes, data.data(), data.size()); !r) return r.error();
        if (hash_bytes_parallel(data.data(), data.size()) != slots_[i].input_hash) modified.push_back(c.buffers[i].name);
    }
    return modified;
}

Expected<std::vector<std::vector<std::byte>>> DeviceCase::download_results(const Case& c) {
    std::vector<std::vector<std::byte>> out;
    for (int index : c.results) {
        std::vector<std::byte> data(slots_.at(index).bytes);
        if (auto r = device_->download(slots_[index].live, kGuardBytes, data.data(), data.size()); !r) return r.error();
        out.push_back(std::move(data));
    }
    return out;
}

}  // namespace kevo
