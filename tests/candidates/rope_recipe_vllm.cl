// rope_recipe_vllm: vLLM's rotary arithmetic (csrc/pos_encoding_kernels.cu,
// apply_token_rotary_embedding: `arr[x_index] = x * cos - y * sin` in scalar_t, with a cos_sin_cache
// in the model's dtype): cos and sin rounded to bf16, each product rounded to bf16, then their
// difference. Off the exact value by up to ~2^-8 of |x1 c| + |x2 s|; the task's contract admits it
// against its own value (docs/ml-checks.md). A test kernel: it must pass.
// kevo: tune BX 128 64 256 512
// kevo: launch rope block=BX,1
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

__kernel void rope(__global const int* positions, __global ushort* q, __global ushort* k, __global const float* cos_sin_cache, uint head_dim, uint q_heads, uint kv_heads, uint tokens)
{
    const uint p = (uint)get_global_id(0), t = (uint)get_global_id(1);
    const uint half_dim = head_dim / 2;
    if (t >= tokens || p >= (q_heads + kv_heads) * half_dim) return;
    const uint head = p / half_dim, i = p % half_dim;
    // Heads 0 .. q_heads-1 are q's, the rest k's.
    __global ushort* row = head < q_heads ? q + ((size_t)t * q_heads + head) * head_dim
                                          : k + ((size_t)t * kv_heads + (head - q_heads)) * head_dim;
    __global const float* cs = cos_sin_cache + (size_t)positions[t] * head_dim;
    // vLLM's cache holds cos and sin in the model's dtype: rounded to bf16.
    const float c = bf16_to_float(float_to_bf16(cs[i])), s = bf16_to_float(float_to_bf16(cs[half_dim + i]));
    const float x1 = bf16_to_float(row[i]), x2 = bf16_to_float(row[half_dim + i]);
    // x * cos - y * sin in scalar_t: each bf16 product rounded (exact in fp32 first), then the sum.
    const float x1c = bf16_to_float(float_to_bf16(x1 * c)), x2s = bf16_to_float(float_to_bf16(x2 * s));
    const float x2c = bf16_to_float(float_to_bf16(x2 * c)), x1s = bf16_to_float(float_to_bf16(x1 * s));
    row[i] = float_to_bf16(x1c - x2s);
    row[half_dim + i] = float_to_bf16(x2c + x1s);
}
