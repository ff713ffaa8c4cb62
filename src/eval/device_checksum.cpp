// DeviceChecksum: the built-in checksum kernel over buffer regions, and its host twin.
#include "eval/device_checksum.hpp"

#include <fmt/format.h>

#include "core/rng.hpp"
#include "eval/builtin_kernels.hpp"

namespace kevo {

namespace {

constexpr uint64_t kGroup = 256;        // the kernels' fixed work-group size
constexpr uint64_t kTile = kGroup * 32;  // words per work-group (32 per work-item)

uint32_t low(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t high(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

// The kernels' kevo_mix_lo and kevo_mix_hi.
uint32_t mix_lo(uint32_t w, uint64_t j, uint32_t key) {
    return rng::fmix32((w ^ key) + low(j) * 0x9E3779B9u + high(j) * 0x7FEB352Du);
}

uint32_t mix_hi(uint32_t w, uint64_t j, uint32_t key) {
    return rng::fmix32((w ^ key) + low(j) * 0xC2B2AE3Du + high(j) * 0x27D4EB2Fu + 0x165667B1u);
}

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
    if (!module_) {
        auto compiled = compile_builtin(device_, "checksum", {});
        if (!compiled) return compiled.error();
        if (!compiled->module) return make_error("the built-in checksum kernel did not compile:\n" + compiled->log);
        module_ = *compiled->module;
        auto words = device_.kernel(*module_, "kevo_checksum_words");
        if (!words) return words.error();
        auto bytes = device_.kernel(*module_, "kevo_checksum_bytes");
        if (!bytes) return bytes.error();
        words_kernel_ = *words;
        bytes_kernel_ = *bytes;
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

// A region that starts on a word goes to the words kernel, all but a partial last word, which the
// bytes kernel adds; any other region goes to the bytes kernel whole. The empty region adds nothing.
void DeviceChecksum::append_launches(const ChecksumRegion& r, uint32_t slot, std::vector<Launch>& launches) const {
    auto launch = [&](uint32_t kernel, uint64_t words, std::vector<KernelArg> args) {
        args.insert(args.end(), {KernelArg::u(low(key_)), KernelArg::u(high(key_)), KernelArg::buf(*sums_),
                                 KernelArg::u(slot)});
        launches.push_back({kernel, {(words + kTile - 1) / kTile, 1, 1}, {kGroup, 1, 1}, std::move(args)});
    };
    const uint64_t whole = r.offset % 4 == 0 ? r.bytes / 4 : 0;  // words the words kernel reads
    if (whole > 0)
        launch(words_kernel_, whole, {KernelArg::buf(r.buffer), KernelArg::u(low(r.offset / 4)),
                                      KernelArg::u(high(r.offset / 4)), KernelArg::u(low(whole)),
                                      KernelArg::u(high(whole))});
    const uint64_t words = (r.bytes + 3) / 4;
    if (words > whole)
        launch(bytes_kernel_, words - whole, {KernelArg::buf(r.buffer), KernelArg::u(low(r.offset)),
                                              KernelArg::u(high(r.offset)), KernelArg::u(low(r.bytes)),
                                              KernelArg::u(high(r.bytes)), KernelArg::u(low(whole)),
                                              KernelArg::u(high(whole))});
}

Expected<std::vector<uint64_t>> DeviceChecksum::compute(std::span<const ChecksumRegion> regions) {
    std::vector<uint64_t> out(regions.size(), 0);
    if (regions.empty()) return out;
    if (auto r = prepare(regions.size()); !r) return r.error();
    std::vector<Launch> launches;
    for (size_t i = 0; i < regions.size(); ++i) append_launches(regions[i], static_cast<uint32_t>(i), launches);
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
