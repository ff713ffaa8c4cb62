// silu_and_mul seed (naive on purpose): one output element per thread.
// kevo: tune BX 256 128 512 64
// kevo: launch silu_and_mul block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 256
#endif

extern "C" __global__ void silu_and_mul(const __nv_bfloat16* x, __nv_bfloat16* out, unsigned d, unsigned tokens)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= d || t >= tokens) return;
    const float g = __bfloat162float(x[(size_t)t * 2 * d + i]);
    const float u = __bfloat162float(x[(size_t)t * 2 * d + d + i]);
    // silu(g) and the product stay in fp32: one rounding, at the store.
    out[(size_t)t * d + i] = __float2bfloat16_rn(g / (1.0f + expf(-g)) * u);
}
