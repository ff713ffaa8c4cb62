// silu_and_mul best-known CUDA kernel: eight outputs per thread through 16-byte loads and stores
// (uint4 holding eight bf16), a grid-stride loop over the row so one block covers a row of any
// width, silu in fp32 with __expf (its error, ~2 ulp of fp32 at the gate values that matter, is far
// below a bf16 ulp) and one rounding per output. I is a multiple of 64 and buffers are 16-byte
// aligned, so the vector accesses never straddle a row.
// kevo: tune BX 128 256 64 512
// kevo: launch silu_and_mul block=BX,1 per_thread=8,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 128
#endif

__device__ __forceinline__ float silu_mul(__nv_bfloat16 g, __nv_bfloat16 u)
{
    const float gf = __bfloat162float(g);
    return gf / (1.0f + __expf(-gf)) * __bfloat162float(u);
}

extern "C" __global__ void silu_and_mul(const __nv_bfloat16* x, __nv_bfloat16* out, unsigned d, unsigned tokens)
{
    const unsigned t = blockIdx.y;
    if (t >= tokens) return;
    const uint4* gate = reinterpret_cast<const uint4*>(x + (size_t)t * 2 * d);
    const uint4* up = reinterpret_cast<const uint4*>(x + (size_t)t * 2 * d + d);
    uint4* dst = reinterpret_cast<uint4*>(out + (size_t)t * d);
    const unsigned vectors = d / 8;
    for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors; v += gridDim.x * blockDim.x) {
        const uint4 gv = __ldg(gate + v), uv = __ldg(up + v);
        const __nv_bfloat16* g = reinterpret_cast<const __nv_bfloat16*>(&gv);
        const __nv_bfloat16* u = reinterpret_cast<const __nv_bfloat16*>(&uv);
        uint4 rv;
        __nv_bfloat16* r = reinterpret_cast<__nv_bfloat16*>(&rv);
#pragma unroll
        for (int k = 0; k < 8; ++k) r[k] = __float2bfloat16_rn(silu_mul(g[k], u[k]));
        dst[v] = rv;
    }
}
