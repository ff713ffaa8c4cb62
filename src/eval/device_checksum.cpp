// DeviceChecksum: the built-in checksum kernel over buffer regions, and its host twin.
#include "eval/device_checksum.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/rng.hpp"
#include "eval/builtin_kernels.hpp"

namespace kevo {

namespace {

constexpr uint64_t kGroup = 256;             // the kernels' fixed work-group size
constexpr uint64_t kGroupsPerComputeUnit = 8;  // enough resident groups to reach the memory bandwidth

uint32_t mix_lo(uint32_t w, uint64_t j, uint32_t key) {
    return rng::fmix32((w ^ key) + static_cast<uint32_t>(j) * 0x9E3779B9u + static_cast<uint32_t>(j >> 32) * 0x7FEB352Du);
}

uint32_t mix_hi(uint32_t w, uint64_t j, uint32_t key) {
    return rng::fmix32((w ^ key) + static_cast<uint32_t>(j) * 0xC2B2AE3Du + static_cast<uint32_t>(j >> 32) * 0x27D4EB2Fu +
                  0x165667B1u);
}

uint32_t low(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t high(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

}  // namespace

uint64_t host_checksum(const void* data, uint64_t bytes, uint64_t key) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint32_t lo = 0, hi = 0;
    for (uint64_t j = 0; 4 * j < bytes; ++j) {
        uint32_t w = 0;
        for (uint64_t b = 0; b < 4 && 4 * j + b < bytes; ++b) w |= static_cast<uint32_t>(p[4 * j + b]) << (8 * b);
        lo += mix_lo(w, j, low(key));
        hi += mix_hi(w, j, high(key));
    }
    return (static_cast<uint64_t>(hi) << 32) | lo;
}

DeviceChecksum::DeviceChecksum(Device& device, uint64_t key) : device_(device), key_(key) {}

DeviceChecksum::~DeviceChecksum() {
    if (device_.is_poisoned()) return;
    if (sums_) device_.release(*sums_);
    if (module_) device_.release_module(*module_);
}

Expected<void> DeviceChecksum::prepare(size_t slots) {
    if (!kernel_) {
        const std::string file = fmt::format("checksum.{}", language_suffix(device_.language()));
        auto compiled = device_.compile(std::string(builtin_kernel(file)), {});
        if (!compiled) return compiled.error();
        if (!compiled->module) return make_error("the built-in checksum kernel did not compile:\n" + compiled->log);
        module_ = *compiled->module;
        auto kernel = device_.kernel(*module_, "kevo_checksum");
        if (!kernel) return kernel.error();
        kernel_ = *kernel;
    }
    if (slots > slots_) {
        // Room for twice as many regions as asked, so that growing batches rarely reallocate.
        if (sums_) device_.release(*sums_);
        sums_.reset();
        auto buffer = device_.allocate(2 * slots * 2 * sizeof(uint32_t));
        if (!buffer) return make_error("the checksum kernel's result buffer: " + buffer.error().message);
        sums_ = *buffer;
        slots_ = 2 * slots;
    }
    return {};
}

Expected<std::vector<uint64_t>> DeviceChecksum::compute(std::span<const ChecksumRegion> regions) {
    std::vector<uint64_t> out(regions.size(), 0);
    if (regions.empty()) return out;
    if (auto r = prepare(regions.size()); !r) return r.error();
    const uint64_t max_groups = std::max<uint64_t>(1, static_cast<uint64_t>(device_.info().compute_units)) *
                                kGroupsPerComputeUnit;
    std::vector<Launch> launches;
    for (size_t i = 0; i < regions.size(); ++i) {
        const ChecksumRegion& r = regions[i];
        if (r.bytes == 0) continue;  // the empty sum, as on the host
        const uint64_t words = (r.bytes + 3) / 4;
        Launch l;
        l.kernel = *kernel_;
        l.block = {kGroup, 1, 1};
        l.grid = {std::clamp<uint64_t>((words + kGroup - 1) / kGroup, 1, max_groups), 1, 1};
        l.args = {KernelArg::buf(r.buffer), KernelArg::buf(r.buffer), KernelArg::u(low(r.offset)),
                  KernelArg::u(high(r.offset)), KernelArg::u(low(r.bytes)), KernelArg::u(high(r.bytes)),
                  KernelArg::u(low(key_)), KernelArg::u(high(key_)), KernelArg::buf(*sums_),
                  KernelArg::u(static_cast<uint32_t>(i))};
        launches.push_back(std::move(l));
    }
    if (launches.empty()) return out;
    std::vector<uint32_t> sums(2 * regions.size(), 0);
    const uint64_t sum_bytes = sums.size() * sizeof(uint32_t);
    if (auto r = device_.upload(*sums_, 0, sums.data(), sum_bytes); !r) return r.error();
    if (auto r = device_.run(launches); !r) return make_error("the built-in checksum kernel failed: " + r.error().message);
    if (auto r = device_.download(*sums_, 0, sums.data(), sum_bytes); !r) return r.error();
    ++batches_;
    for (size_t i = 0; i < regions.size(); ++i) out[i] = (static_cast<uint64_t>(sums[2 * i + 1]) << 32) | sums[2 * i];
    return out;
}

}  // namespace kevo
