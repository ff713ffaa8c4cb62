// rope_recipe_fused: vLLM's rotary arithmetic written with plain __hmul, as vLLM-style CUDA code is
// usually written: nvcc (--fmad=true, the default) may fuse one product into the __hsub/__hadd as
// one fma.rn.bf16. Off vLLM's as-written order by up to one product's rounding; the task's contract
// admits both (docs/ml-checks.md). A test kernel: it must pass.
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
    // x * cos - y * sin in scalar_t (__hmul, __hsub, __hadd: each rounded to bf16).
    row[i] = __hsub(__hmul(x, c), __hmul(y, s));
    row[half_dim + i] = __hadd(__hmul(y, c), __hmul(x, s));
}
