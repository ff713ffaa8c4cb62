// silu_and_mul_slightly_wrong: a swish with beta 1.02, g * sigmoid(1.02 g), where silu is beta 1:
// a wrong constant worth up to ~1.5% of the output (several ulp), one rounding at the store.
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
    out[(size_t)t * d + i] = __float2bfloat16_rn(g / (1.0f + expf(-1.02f * g)) * u);  // WRONG: beta 1.02
}
