// qk_norm_rope_kv_recipe_vllm: vLLM's unfused Qwen3 path (and HF's): q_norm / k_norm as its RMSNorm
// kernel, bf16(bf16(x inv_rms) gamma) (csrc/layernorm_kernels.cu), a bf16 intermediate, then its
// rotary kernel's bf16 arithmetic (csrc/pos_encoding_kernels.cu, a cos_sin_cache in the model's
// dtype: cos and sin rounded to bf16, each product rounded to bf16, then their difference). Up to
// ~3 ulp from the exact value; the task's contract admits it against its own value. A test kernel:
// it must pass.
// kevo: tune BX 128 256 512
// kevo: launch qk_norm_rope_kv block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 128
#endif

extern "C" __global__ void qk_norm_rope_kv(const __nv_bfloat16* qkv, const __nv_bfloat16* q_weight, const __nv_bfloat16* k_weight, const int* positions, const float* cos_sin_cache, const int* slot_mapping, __nv_bfloat16* q_out, __nv_bfloat16* key_cache, __nv_bfloat16* value_cache, unsigned head_dim, unsigned q_heads, unsigned kv_heads, unsigned tokens, float eps)
{
    __shared__ float partial[BX];  // BX is a multiple of head_dim, a power of two: blocks hold whole heads
    __shared__ float normed[BX];
    const unsigned lid = threadIdx.x, e = blockIdx.x * blockDim.x + lid, t = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned heads = q_heads + 2 * kv_heads, half_dim = head_dim / 2;
    const unsigned head = e / head_dim, j = e % head_dim, base = lid - j;  // base: the head's first thread
    // Out-of-range threads take part in the barriers with x = 0.
    const bool live = t < tokens && head < heads;
    const float x = live ? __bfloat162float(qkv[(size_t)t * heads * head_dim + e]) : 0.0f;
    partial[lid] = x * x;
    __syncthreads();
    for (unsigned s = half_dim; s > 0; s >>= 1) {
        if (j < s) partial[lid] += partial[lid + s];
        __syncthreads();
    }
    const float inv_rms = rsqrtf(partial[base] / (float)head_dim + eps);
    const bool is_q = head < q_heads, is_k = !is_q && head < q_heads + kv_heads;
    float n = x;
    // vLLM's RMSNorm: x inv_rms rounded to bf16, times the gamma, rounded again.
    if (is_q) n = __bfloat162float(__float2bfloat16_rn(__bfloat162float(__float2bfloat16_rn(x * inv_rms)) * __bfloat162float(q_weight[j])));
    if (is_k) n = __bfloat162float(__float2bfloat16_rn(__bfloat162float(__float2bfloat16_rn(x * inv_rms)) * __bfloat162float(k_weight[j])));
    normed[lid] = n;
    __syncthreads();
    if (!live) return;
    const int slot = slot_mapping[t];
    if (!is_q && slot < 0) return;  // a padding token: no cache write
    const size_t cache_row = (size_t)slot * kv_heads * head_dim;
    if (!is_q && !is_k) {  // v: copied as bits
        value_cache[cache_row + (head - q_heads - kv_heads) * head_dim + j] = qkv[(size_t)t * heads * head_dim + e];
        return;
    }
    const float* cs = cos_sin_cache + (size_t)positions[t] * head_dim;
    const unsigned i = j % half_dim;
    // vLLM's cache holds cos and sin in the model's dtype: rounded to bf16.
    const float c = __bfloat162float(__float2bfloat16_rn(cs[i])), s = __bfloat162float(__float2bfloat16_rn(cs[half_dim + i]));
    const float partner = normed[base + (j < half_dim ? j + half_dim : j - half_dim)];
    // first half: x1 c - x2 s; second half: x2 c + x1 s (n is this element, partner the other).
    // x * cos - y * sin in scalar_t: each bf16 product rounded (exact in fp32 first), then the sum.
    const float nc = __bfloat162float(__float2bfloat16_rn(n * c)), ps = __bfloat162float(__float2bfloat16_rn(partner * s));
    const __nv_bfloat16 out = __float2bfloat16_rn(j < half_dim ? nc - ps : nc + ps);
    if (is_q) q_out[((size_t)t * q_heads + head) * head_dim + j] = out;
    else key_cache[cache_row + (head - q_heads) * head_dim + j] = out;
}
