// rope_only_nonconsecutive: right for a prefill chunk (consecutive positions) but not for a decode
// batch: the position of token t is taken as positions[0] + t. The outlier trial's tokens each have
// their own position (token 0 at the last one, token 1 at 0); this kernel must fail there.
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
    // WRONG (only where positions are not consecutive): a prefill chunk's positions[0] + t assumed.
    __global const float* cs = cos_sin_cache + (size_t)(positions[0] + (int)t) * head_dim;
    const float c = cs[i], s = cs[half_dim + i];
    const float x1 = bf16_to_float(row[i]), x2 = bf16_to_float(row[half_dim + i]);
    row[i] = float_to_bf16(x1 * c - x2 * s);
    row[half_dim + i] = float_to_bf16(x2 * c + x1 * s);
}
