// add_rmsnorm best-known CUDA kernel: one block per row, 16-byte loads and stores (uint4 = eight
// bf16), the row kept in registers between the two passes (up to ROW_VECTORS uint4 per thread; the
// rest is re-read), warp shuffles and one shared word per warp for the fp32 sum of squares.
// H is a multiple of 64 and buffers are 16-byte aligned.
// kevo: tune BX 256 128 512 1024
// kevo: launch add_rmsnorm block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 256
#endif
#define ROW_VECTORS 4

__device__ __forceinline__ void unpack8(const uint4& v, float* f)
{
    const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const float2 two = __bfloat1622float2(p[k]);
        f[2 * k] = two.x;
        f[2 * k + 1] = two.y;
    }
}

__device__ __forceinline__ uint4 pack8(const float* f)
{
    uint4 v;
    __nv_bfloat162* p = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) p[k] = __floats2bfloat162_rn(f[2 * k], f[2 * k + 1]);
    return v;
}

extern "C" __global__ void add_rmsnorm(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* weight, __nv_bfloat16* y, unsigned hidden, unsigned tokens, float eps)
{
    __shared__ float warp_sums[BX / 32];
    __shared__ float inv_rms_shared;
    const unsigned t = blockIdx.y, lid = threadIdx.x;
    if (t >= tokens) return;
    const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)t * hidden);
    uint4* rr = reinterpret_cast<uint4*>(residual + (size_t)t * hidden);
    uint4* yr = reinterpret_cast<uint4*>(y + (size_t)t * hidden);
    const uint4* wr = reinterpret_cast<const uint4*>(weight);
    const unsigned vectors = hidden / 8;
    uint4 kept[ROW_VECTORS];
    float sum = 0.0f;
    unsigned n = 0;
    for (unsigned v = lid; v < vectors; v += BX, ++n) {
        float a[8], b[8];
        unpack8(__ldg(xr + v), a);
        unpack8(rr[v], b);
#pragma unroll
        for (int k = 0; k < 8; ++k) a[k] += b[k];
        const uint4 r = pack8(a);
        rr[v] = r;
        unpack8(r, a);
#pragma unroll
        for (int k = 0; k < 8; ++k) sum += a[k] * a[k];
        if (n < ROW_VECTORS) kept[n] = r;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lid % 32 == 0) warp_sums[lid / 32] = sum;
    __syncthreads();
    if (lid < 32) {
        float s = lid < BX / 32 ? warp_sums[lid] : 0.0f;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
        if (lid == 0) inv_rms_shared = rsqrtf(s / (float)hidden + eps);
    }
    __syncthreads();
    const float inv_rms = inv_rms_shared;
    n = 0;
    for (unsigned v = lid; v < vectors; v += BX, ++n) {
        float r[8], w[8];
        unpack8(n < ROW_VECTORS ? kept[n] : rr[v], r);
        unpack8(__ldg(wr + v), w);
#pragma unroll
        for (int k = 0; k < 8; ++k) r[k] = r[k] * inv_rms * w[k];
        yr[v] = pack8(r);
    }
}
