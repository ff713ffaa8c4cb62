// rope_recipe_vllm: vLLM's rotary arithmetic (csrc/pos_encoding_kernels.cu,
// apply_token_rotary_embedding: `arr[x_index] = x * cos - y * sin` in scalar_t, with a cos_sin_cache
// in the model's dtype): cos and sin rounded to bf16, each product rounded to bf16 (__hmul_rn: plain
// __hmul lets nvcc fuse one product into the subtraction, rope_recipe_fused's order), then their
// difference. Off the exact value by up to ~2^-8 of |x1 c| + |x2 s|; the task's contract admits it
// against its own value (docs/ml-checks.md). A test kernel: it must pass.
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
    // vLLM's cache holds cos and sin in the model's dtype: rounded to bf16.
    const __nv_bfloat16 c = __float2bfloat16_rn(cs[i]), s = __float2bfloat16_rn(cs[half_dim + i]);
    const __nv_bfloat16 x = row[i], y = row[half_dim + i];
    // x * cos - y * sin in scalar_t (__hmul_rn, __hsub, __hadd: each rounded to bf16, none fused).
    row[i] = __hsub(__hmul_rn(x, c), __hmul_rn(y, s));
    row[half_dim + i] = __hadd(__hmul_rn(y, c), __hmul_rn(x, s));
}
