// rope seed (naive on purpose): one rotation pair (x_i, x_{i+d/2}) of one head of one token per
// thread, neox layout, in place; cos and sin read from the fp32 cache row of the token's position.
// kevo: tune BX 128 64 256 512
// kevo: launch rope block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 128
#endif

extern "C" __global__ void rope(const int* positions, __nv_bfloat16* q, __nv_bfloat16* k, const float* cos_sin_cache, unsigned head_dim, unsigned q_heads, unsigned kv_heads, unsigned tokens)
{
    const unsigned p = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned half_dim = head_dim / 2;
    if (t >= tokens || p >= (q_heads + kv_heads) * half_dim) return;
    const unsigned head = p / half_dim, i = p % half_dim;
    // Heads 0 .. q_heads-1 are q's, the rest k's.
    __nv_bfloat16* row = head < q_heads ? q + ((size_t)t * q_heads + head) * head_dim
                                        : k + ((size_t)t * kv_heads + (head - q_heads)) * head_dim;
    const float* cs = cos_sin_cache + (size_t)positions[t] * head_dim;
    const float c = cs[i], s = cs[half_dim + i];
    const float x1 = __bfloat162float(row[i]), x2 = __bfloat162float(row[half_dim + i]);
    row[i] = __float2bfloat16_rn(x1 * c - x2 * s);
    row[half_dim + i] = __float2bfloat16_rn(x2 * c + x1 * s);
}
