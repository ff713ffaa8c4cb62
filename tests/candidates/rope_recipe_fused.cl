// rope_recipe_fused: vLLM's rotary arithmetic as nvcc compiles `__hsub(__hmul(x, c), __hmul(y, s))`
// with --fmad=true (the default): cos and sin rounded to bf16, the second product rounded to bf16,
// the first kept exact inside one fused multiply-add (fma.rn.bf16). Off vLLM's as-written order by
// up to one product's rounding; the task's contract admits both orders (docs/ml-checks.md). A test
// kernel: it must pass.
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
    // One product rounded to bf16, the other exact in the fma (a bf16 x bf16 product is exact in fp32).
    const float x2s = bf16_to_float(float_to_bf16(x2 * s)), x1s = bf16_to_float(float_to_bf16(x1 * s));
    row[i] = float_to_bf16(fma(x1, c, -x2s));
    row[half_dim + i] = float_to_bf16(fma(x2, c, x1s));
}
