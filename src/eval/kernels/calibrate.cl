// Calibration kernels (OpenCL C): streaming copy and triad on float4 with a grid-stride loop, a
// buffer fill, and an FMA chain for FP32 throughput. Run by src/eval/calibration.cpp.

#ifndef FMA_ITERS
#define FMA_ITERS 4096
#endif
#ifndef FMA_UNROLL
#define FMA_UNROLL 64
#endif
// Lanes per chain: 1 on a GPU; a CPU gets explicit vectors because a loop inside the kernel keeps
// its compiler from vectorising across work-items.
#ifndef FMA_WIDTH
#define FMA_WIDTH 1
#endif

#if FMA_WIDTH == 1
typedef float vfloat;
#elif FMA_WIDTH == 2
typedef float2 vfloat;
#elif FMA_WIDTH == 4
typedef float4 vfloat;
#elif FMA_WIDTH == 8
typedef float8 vfloat;
#elif FMA_WIDTH == 16
typedef float16 vfloat;
#else
#error "FMA_WIDTH must be 1, 2, 4, 8 or 16"
#endif

__kernel void calib_fill(__global float4* restrict a, float value, uint n) {
    const uint stride = get_global_size(0);
    for (uint i = get_global_id(0); i < n; i += stride) a[i] = (float4)(value);
}

__kernel void calib_copy(__global const float4* restrict a, __global float4* restrict b, uint n) {
    const uint stride = get_global_size(0);
    for (uint i = get_global_id(0); i < n; i += stride) b[i] = a[i];
}

__kernel void calib_triad(__global float4* restrict a, __global const float4* restrict b,
                          __global const float4* restrict c, float s, uint n) {
    const uint stride = get_global_size(0);
    for (uint i = get_global_id(0); i < n; i += stride) a[i] = b[i] + s * c[i];
}

// Eight independent chains hide the FMA latency; a and b are run-time values so nothing folds.
// 2 * 8 * FMA_WIDTH * FMA_ITERS FLOP per work-item; the sum is stored so no chain is dead code.
// mad() rather than fma(): fma() must be exact and is emulated in software where the hardware has
// no fused multiply-add, while mad() compiles to the FMA instruction wherever there is one.
__kernel void calib_fma(__global float* restrict out, float a, float b) {
    const uint gid = get_global_id(0);
    const vfloat va = (vfloat)(a), vb = (vfloat)(b);
    vfloat x0 = (vfloat)(gid * 1e-9f), x1 = x0 + 0.1f, x2 = x0 + 0.2f, x3 = x0 + 0.3f;
    vfloat x4 = x0 + 0.4f, x5 = x0 + 0.5f, x6 = x0 + 0.6f, x7 = x0 + 0.7f;
    for (int outer = 0; outer < FMA_ITERS / FMA_UNROLL; ++outer) {
#pragma unroll
        for (int i = 0; i < FMA_UNROLL; ++i) {
            x0 = mad(x0, va, vb); x1 = mad(x1, va, vb); x2 = mad(x2, va, vb); x3 = mad(x3, va, vb);
            x4 = mad(x4, va, vb); x5 = mad(x5, va, vb); x6 = mad(x6, va, vb); x7 = mad(x7, va, vb);
        }
    }
    const vfloat sum = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
#if FMA_WIDTH == 1
    out[gid] = sum;
#else
    float total = 0.0f;
    const float* lanes = (const float*)&sum;
    for (int k = 0; k < FMA_WIDTH; ++k) total += lanes[k];
    out[gid] = total;
#endif
}
