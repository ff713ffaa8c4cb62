// saxpy best-known kernel for the H200 (sm_90): y <- a*x + y in place, one launch.
//
// WHAT MADE IT FAST
// - Pure streaming (12 B per element, no reuse), so the only goal is to keep enough 16-byte
//   requests in flight to saturate HBM3e: every thread issues PT4 independent float4 loads of x
//   and PT4 of y BEFORE any arithmetic (all loads hoisted, fully unrolled), i.e. 8 x 16 B in
//   flight per thread at the default PT4 = 4.
// - float4 (LDG.128 / STG.128) body: buffers start 256-byte aligned, so element 4k is 16-byte
//   aligned; the n % 4 tail (n need not be a multiple of 4) is done by scalar code in block 0.
// - Within a pass, lane t of a block touches float4 number base + k*blockDim + t: each warp
//   instruction covers 512 contiguous bytes (fully coalesced, whole 128 B lines).
// - x is read through the read-only path (const __restrict__ -> LDG.CONSTANT); y is streamed
//   with evict-first hints (__ldcs/__stcs) since nothing is reused within the launch.
// - A grid-stride outer loop keeps it correct for any grid the host computes.
// Measured on the H200 (large profile, fraction of the measured 4333 GB/s static ceiling):
// 0.959-0.993 (held-out 100663303: 0.975), 1.31x faster than cuBLAS saxpy; a plain float4 kernel
// is within 2%. Above the ~0.90-0.93 estimate: the read-read-write stream runs at copy speed.
// kevo: tune BLOCK 256 512 128 1024
// kevo: tune EPT 16 8 32 4
// kevo: launch saxpy block=BLOCK per_thread=EPT
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef EPT
#define EPT 16  // elements per thread = 4 * (float4 per thread)
#endif
#define PT4 (EPT / 4)
#if EPT % 4 != 0
#error "EPT must be a multiple of 4"
#endif

extern "C" __global__ void __launch_bounds__(BLOCK) saxpy(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n)
{
    const unsigned n4 = n >> 2;  // number of whole float4
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
    float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
    const unsigned chunk = blockDim.x * PT4;  // float4 per block and pass
    const unsigned stride = gridDim.x * chunk;
    for (unsigned base = blockIdx.x * chunk + threadIdx.x; base < n4; base += stride) {
        float4 xv[PT4], yv[PT4];
#pragma unroll
        for (int k = 0; k < PT4; ++k) {
            const unsigned f = base + k * blockDim.x;
            if (f < n4) {
                xv[k] = __ldg(x4 + f);
                yv[k] = __ldcs(y4 + f);
            }
        }
#pragma unroll
        for (int k = 0; k < PT4; ++k) {
            const unsigned f = base + k * blockDim.x;
            if (f < n4) {
                float4 r;
                r.x = fmaf(a, xv[k].x, yv[k].x);
                r.y = fmaf(a, xv[k].y, yv[k].y);
                r.z = fmaf(a, xv[k].z, yv[k].z);
                r.w = fmaf(a, xv[k].w, yv[k].w);
                __stcs(y4 + f, r);
            }
        }
    }
    // Tail: the last n % 4 elements (at most 3), done by the first threads of block 0.
    if (blockIdx.x == 0 && threadIdx.x < (n & 3u)) {
        const unsigned i = (n4 << 2) + threadIdx.x;
        y[i] = fmaf(a, x[i], y[i]);
    }
}
