// Vendor library routines (cuFFT, cuBLAS, cuBLASLt) as an optional extension of a Device: only a
// backend with vendor libraries (CUDA) implements VendorRoutines; callers go through the free
// functions below, which say so when the device has none. Vendor headers stay under src/backends/.
#pragma once

#include <cstdint>
#include <string>

#include "backend/backend.hpp"
#include "core/expected.hpp"

namespace kevo {

// A vendor library routine a backend can time as a peer of a suite kernel (`kevo bench`), or as the
// yardstick of a tensor-core ceiling (calibration: the GEMMs).
enum class VendorRoutine {
    fft3d_c2c,  // forward, unnormalised, out of place: n^3 complex float (cuFFT)
    saxpy,      // y <- alpha x + y on n floats (cuBLAS)
    // D <- A^T B (cuBLASLt), column-major: A is k x m and B k x n, both with leading dimension k
    // (so A's columns are the rows of a row-major [m, k] matrix), D is m x n with leading dimension m:
    gemm_bf16,  // bf16 operands, fp32 accumulate, bf16 D
    gemm_fp8,   // fp8 e4m3 operands, fp32 accumulate, bf16 D
    gemm_int8,  // int8 operands, int32 accumulate, int32 D
    // fp8 e4m3 operands with fp32 block scales, bf16 D: A (the weights' side) one scale per 128 x 128
    // block, B (the activations' side) one per 128 values of k (cuBLASLt's BLK128x128_32F and
    // VEC128_32F modes, CUDA 12.9+; layouts in gemm_fp8_block_scale_counts below).
    gemm_fp8_block,
};
const char* vendor_routine_name(VendorRoutine routine);

// The extent of a GEMM call: D is m x n, the inner dimension k.
struct GemmDims {
    uint64_t m = 0, n = 0, k = 0;
    bool operator==(const GemmDims&) const = default;
};

struct VendorCall {
    VendorRoutine routine = VendorRoutine::saxpy;
    uint64_t n = 0;     // cube side (fft3d_c2c), element count (saxpy), D's columns (GEMMs)
    BufferHandle in{};  // fft3d_c2c: input; saxpy: x; GEMMs: A
    BufferHandle out{}; // fft3d_c2c: output; saxpy: y, updated in place; GEMMs: D
    float alpha = 0;
    BufferHandle in_b{};  // GEMMs: B
    // GEMMs: D's rows and the inner dimension. Both 0 (the tensor ceilings' calls) mean the cube
    // n x n x n; see gemm_dims.
    uint64_t m = 0, k = 0;
    BufferHandle scale_a{}, scale_b{};  // gemm_fp8_block: A's and B's block scales
};

// The GEMM extent a call asks for: (m, n, k), or (n, n, n) when m and k are both 0.
inline GemmDims gemm_dims(const VendorCall& call) {
    if (call.m == 0 && call.k == 0) return {call.n, call.n, call.n};
    return {call.m, call.n, call.k};
}

// gemm_fp8_block's scale tensors as cuBLASLt lays them out, in floats: A's BLK128x128 scales are
// ceil(m/128) columns of ceil(k/128) values rounded up to a multiple of 4 (k-blocks fastest); B's
// VEC128 scales are ceil(k/128) rows of n values rounded up to a multiple of 4 (n fastest).
struct BlockScaleCounts {
    uint64_t a = 0, b = 0;
    uint64_t a_lead = 0, b_lead = 0;  // the padded fastest extents
};
BlockScaleCounts gemm_fp8_block_scale_counts(const GemmDims& dims);

// What a device with vendor libraries implements besides Device (CudaDevice does).
class VendorRoutines {
public:
    virtual ~VendorRoutines() = default;
    // The vendor library that provides `routine` on this device ("cuFFT 12.0"), or an error saying
    // why there is none.
    virtual Expected<std::string> vendor_library(VendorRoutine routine) = 0;
    // Runs one call of the vendor routine, timed on the device like Device::run_timed.
    virtual Expected<double> run_vendor_timed(const VendorCall& call) = 0;
};

// The device's VendorRoutines, or null where its backend has none.
VendorRoutines* vendor_routines_of(Device& device);

// Forward to the device's VendorRoutines; on a device without them, the error
// "no vendor library for <routine> on this backend".
Expected<std::string> vendor_library(Device& device, VendorRoutine routine);
Expected<double> run_vendor_timed(Device& device, const VendorCall& call);

}  // namespace kevo
