// rope_slightly_wrong: the interleaved (GPT-J) pairing, rotating elements 2i and 2i + 1 with the cos
// and sin of frequency i, where the task's neox layout pairs i with i + d/2. Same arithmetic, same
// cache, other partners.
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
    // WRONG: interleaved pairs (2i, 2i + 1) instead of (i, i + d/2)
    const float x1 = __bfloat162float(row[2 * i]), x2 = __bfloat162float(row[2 * i + 1]);
    row[2 * i] = __float2bfloat16_rn(x1 * c - x2 * s);
    row[2 * i + 1] = __float2bfloat16_rn(x2 * c + x1 * s);
}
