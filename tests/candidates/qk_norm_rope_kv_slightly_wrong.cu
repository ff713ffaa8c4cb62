// qk_norm_rope_kv_slightly_wrong: q_out and the roped k are scaled by 1.01 before their rounding (about 2.5 bf16 ulp).
// WRONG on any data; kept by tests/test_tolerances.cpp (Tolerances.*).
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
    if (is_q) n = x * inv_rms * __bfloat162float(q_weight[j]);
    if (is_k) n = x * inv_rms * __bfloat162float(k_weight[j]);
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
    const float c = cs[i], s = cs[half_dim + i];
    const float partner = normed[base + (j < half_dim ? j + half_dim : j - half_dim)];
    // first half: x1 c - x2 s; second half: x2 c + x1 s (n is this element, partner the other).
    const __nv_bfloat16 out = __float2bfloat16_rn(1.01f * (j < half_dim ? n * c - partner * s : n * c + partner * s));  // WRONG: 1.01
    if (is_q) q_out[((size_t)t * q_heads + head) * head_dim + j] = out;
    else key_cache[cache_row + (head - q_heads) * head_dim + j] = out;
}
