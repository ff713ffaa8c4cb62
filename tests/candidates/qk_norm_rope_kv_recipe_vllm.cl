// qk_norm_rope_kv_recipe_vllm: vLLM's unfused Qwen3 path (and HF's): q_norm / k_norm as its RMSNorm
// kernel, bf16(bf16(x inv_rms) gamma) (csrc/layernorm_kernels.cu), a bf16 intermediate, then its
// rotary kernel's bf16 arithmetic (csrc/pos_encoding_kernels.cu, a cos_sin_cache in the model's
// dtype: cos and sin rounded to bf16, each product rounded to bf16, then their difference). Up to
// ~3 ulp from the exact value; the task's contract admits it against its own value. A test kernel:
// it must pass.
// kevo: tune BX 128 256 512
// kevo: launch qk_norm_rope_kv block=BX,1
#ifndef BX
#define BX 128
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel void qk_norm_rope_kv(__global const ushort* qkv, __global const ushort* q_weight, __global const ushort* k_weight, __global const int* positions, __global const float* cos_sin_cache, __global const int* slot_mapping, __global ushort* q_out, __global ushort* key_cache, __global ushort* value_cache, uint head_dim, uint q_heads, uint kv_heads, uint tokens, float eps)
{
    __local float partial[BX];  // BX is a multiple of head_dim, a power of two: groups hold whole heads
    __local float normed[BX];
    const uint e = (uint)get_global_id(0), t = (uint)get_global_id(1), lid = (uint)get_local_id(0);
    const uint heads = q_heads + 2 * kv_heads, half_dim = head_dim / 2;
    const uint head = e / head_dim, j = e % head_dim, base = lid - j;  // base: the head's first work-item
    // Out-of-range work-items take part in the barriers with x = 0.
    const int live = t < tokens && head < heads;
    const float x = live ? bf16_to_float(qkv[(size_t)t * heads * head_dim + e]) : 0.0f;
    partial[lid] = x * x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = half_dim; s > 0; s >>= 1) {
        if (j < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv_rms = rsqrt(partial[base] / (float)head_dim + eps);
    const int is_q = head < q_heads, is_k = !is_q && head < q_heads + kv_heads;
    float n = x;
    // vLLM's RMSNorm: x inv_rms rounded to bf16, times the gamma, rounded again.
    if (is_q) n = bf16_to_float(float_to_bf16(bf16_to_float(float_to_bf16(x * inv_rms)) * bf16_to_float(q_weight[j])));
    if (is_k) n = bf16_to_float(float_to_bf16(bf16_to_float(float_to_bf16(x * inv_rms)) * bf16_to_float(k_weight[j])));
    normed[lid] = n;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!live) return;
    const int slot = slot_mapping[t];
    if (!is_q && slot < 0) return;  // a padding token: no cache write
    const size_t cache_row = (size_t)slot * kv_heads * head_dim;
    if (!is_q && !is_k) {  // v: copied as bits
        value_cache[cache_row + (head - q_heads - kv_heads) * head_dim + j] = qkv[(size_t)t * heads * head_dim + e];
        return;
    }
    __global const float* cs = cos_sin_cache + (size_t)positions[t] * head_dim;
    const uint i = j % half_dim;
    // vLLM's cache holds cos and sin in the model's dtype: rounded to bf16.
    const float c = bf16_to_float(float_to_bf16(cs[i])), s = bf16_to_float(float_to_bf16(cs[half_dim + i]));
    const float partner = normed[base + (j < half_dim ? j + half_dim : j - half_dim)];
    // first half: x1 c - x2 s; second half: x2 c + x1 s (n is this element, partner the other).
    // x * cos - y * sin in scalar_t: each bf16 product rounded (exact in fp32 first), then the sum.
    const float nc = bf16_to_float(float_to_bf16(n * c)), ps = bf16_to_float(float_to_bf16(partner * s));
    const ushort out = float_to_bf16(j < half_dim ? nc - ps : nc + ps);
    if (is_q) q_out[((size_t)t * q_heads + head) * head_dim + j] = out;
    else key_cache[cache_row + (head - q_heads) * head_dim + j] = out;
}
