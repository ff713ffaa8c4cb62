// Vendor routines: their names, the block-scale layout, and the free functions that reach a
// device's optional VendorRoutines (see vendor_routines.hpp).
#include "backend/vendor_routines.hpp"

namespace kevo {
namespace {

Error no_vendor_library(VendorRoutine routine) {
    return make_error(std::string("no vendor library for ") + vendor_routine_name(routine) + " on this backend");
}

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

VendorRoutines* vendor_routines_of(Device& device) { return dynamic_cast<VendorRoutines*>(&device); }

Expected<std::string> vendor_library(Device& device, VendorRoutine routine) {
    if (auto* routines = vendor_routines_of(device)) return routines->vendor_library(routine);
    return no_vendor_library(routine);
}

Expected<double> run_vendor_timed(Device& device, const VendorCall& call) {
    if (auto* routines = vendor_routines_of(device)) return routines->run_vendor_timed(call);
    return no_vendor_library(call.routine);
}

}  // namespace kevo
