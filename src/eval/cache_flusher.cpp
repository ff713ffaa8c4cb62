// CacheFlusher: the built-in flush kernel over a buffer twice the last-level cache.
#include "eval/cache_flusher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "eval/builtin_kernels.hpp"

namespace kevo {

CacheFlusher::~CacheFlusher() {
    if (device_.is_poisoned()) return;
    if (buffer_) device_.release(*buffer_);
    if (module_) device_.release_module(*module_);
}

Expected<void> CacheFlusher::flush() {
    if (!kernel_) {
        auto compiled = compile_builtin(device_, "flush", {});
        if (!compiled) return compiled.error();
        if (!compiled->module) return make_error("the built-in cache-flush kernel did not compile:\n" + compiled->log);
        module_ = *compiled->module;
        auto kernel = device_.kernel(*module_, "kevo_flush");
        if (!kernel) return kernel.error();
        kernel_ = *kernel;
        const auto& info = device_.info();
        // Twice the last-level cache, and at least 32 MiB on a CPU whose L3 the device does not report.
        const uint64_t bytes = std::max<uint64_t>(2 * info.l2_bytes, info.is_cpu ? 32ull << 20 : 8ull << 20);
        elements_ = bytes / 4;
        auto buffer = device_.allocate(bytes);
        if (!buffer) return buffer.error();
        buffer_ = *buffer;
        const std::vector<float> zeros(elements_, 0.0f);
        if (auto r = device_.upload(*buffer_, 0, zeros.data(), bytes); !r) return r;
    }
    Launch l;
    l.kernel = *kernel_;
    l.block = {256, 1, 1};
    l.grid = {(elements_ + 255) / 256, 1, 1};
    l.args = {KernelArg::buf(*buffer_), KernelArg::u(static_cast<uint32_t>(elements_))};
    return device_.run(std::span<const Launch>(&l, 1));
}

}  // namespace kevo
