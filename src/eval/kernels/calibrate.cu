// Calibration kernels (CUDA): streaming copy and triad on float4 with a grid-stride loop, a
// buffer fill, and an FMA chain for FP32 throughput. Run by src/eval/calibration.cpp.

#ifndef FMA_ITERS
#define FMA_ITERS 4096
#endif
#ifndef FMA_UNROLL
#define FMA_UNROLL 64
#endif

extern "C" __global__ void calib_fill(float4* __restrict__ a, float value, unsigned n) {
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        a[i] = make_float4(value, value, value, value);
}

extern "C" __global__ void calib_copy(const float4* __restrict__ a, float4* __restrict__ b, unsigned n) {
    const unsigned stride = gridDim.x * blockDim.x;
    // Unrolled so that a thread of the resident grid (see calibration.cpp) issues several loads at once.
#pragma unroll 4
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) b[i] = a[i];
}

extern "C" __global__ void calib_triad(float4* __restrict__ a, const float4* __restrict__ b,
                                       const float4* __restrict__ c, float s, unsigned n) {
    const unsigned stride = gridDim.x * blockDim.x;
#pragma unroll 4
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float4 x = b[i];
        const float4 y = c[i];
        a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

// Eight independent chains hide the FMA latency; a and b are run-time values so nothing folds.
// 2 * 8 * FMA_ITERS FLOP per thread; the sum is stored so no chain is dead code.
extern "C" __global__ void calib_fma(float* __restrict__ out, float a, float b) {
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x0 = tid * 1e-9f, x1 = x0 + 0.1f, x2 = x0 + 0.2f, x3 = x0 + 0.3f;
    float x4 = x0 + 0.4f, x5 = x0 + 0.5f, x6 = x0 + 0.6f, x7 = x0 + 0.7f;
    for (int outer = 0; outer < FMA_ITERS / FMA_UNROLL; ++outer) {
#pragma unroll
        for (int i = 0; i < FMA_UNROLL; ++i) {
            x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
            x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
        }
    }
    out[tid] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
