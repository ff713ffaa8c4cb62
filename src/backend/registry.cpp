// Backend registry: one line per backend.
#include "backend/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {

std::unique_ptr<Backend> make_cuda_backend();
std::unique_ptr<Backend> make_opencl_backend();

namespace {
struct Entry {
    const char* name;
    std::unique_ptr<Backend> (*make)();
};
constexpr Entry kBackends[] = {
    {"cuda", &make_cuda_backend},
    {"opencl", &make_opencl_backend},
};
}  // namespace

const char* vendor_routine_name(VendorRoutine routine) {
    switch (routine) {
        case VendorRoutine::fft3d_c2c: return "3-D complex FFT";
        case VendorRoutine::saxpy: return "saxpy";
        case VendorRoutine::gemm_bf16: return "bf16 GEMM";
        case VendorRoutine::gemm_fp8: return "fp8 GEMM";
        case VendorRoutine::gemm_int8: return "int8 GEMM";
        case VendorRoutine::gemm_fp8_block: return "fp8 block-scaled GEMM";
    }
    return "?";
}

BlockScaleCounts gemm_fp8_block_scale_counts(const GemmDims& dims) {
    const auto up = [](uint64_t x, uint64_t to) { return (x + to - 1) / to * to; };
    const uint64_t k_blocks = up(dims.k, 128) / 128, m_blocks = up(dims.m, 128) / 128;
    BlockScaleCounts c;
    c.a_lead = up(k_blocks, 4);
    c.b_lead = up(dims.n, 4);
    c.a = m_blocks * c.a_lead;
    c.b = k_blocks * c.b_lead;
    return c;
}

std::vector<std::string> backend_names() {
    std::vector<std::string> names;
    for (const auto& e : kBackends) names.emplace_back(e.name);
    return names;
}

std::vector<std::string> backend_choices() {
    std::vector<std::string> choices = {"auto"};
    for (auto& name : backend_names()) choices.push_back(std::move(name));
    return choices;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
    for (const auto& e : kBackends)
        if (name == e.name) return e.make();
    return nullptr;
}

Expected<std::string> resolve_backend_name(const std::string& requested) {
    if (requested == "auto") {
        if (auto cuda = make_backend("cuda"); cuda && !cuda->probe().empty()) return std::string("cuda");
        return std::string("opencl");
    }
    if (make_backend(requested)) return requested;
    return make_error(fmt::format("unknown backend '{}'; expected one of: auto, {}", requested,
                                  fmt::join(backend_names(), ", ")));
}

std::string backend_for_suffix(const std::string& suffix) {
    const Language language = language_for_suffix(suffix);
    return language ? language->backend : std::string();
}

}  // namespace kevo
