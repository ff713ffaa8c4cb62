// rope_slightly_wrong: the interleaved (GPT-J) pairing, rotating elements 2i and 2i + 1 with the cos
// and sin of frequency i, where the task's neox layout pairs i with i + d/2. Same arithmetic, same
// cache, other partners.
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
    const float c = cs[i], s = cs[half_dim + i];
    // WRONG: interleaved pairs (2i, 2i + 1) instead of (i, i + d/2)
    const float x1 = bf16_to_float(row[2 * i]), x2 = bf16_to_float(row[2 * i + 1]);
    row[2 * i] = float_to_bf16(x1 * c - x2 * s);
    row[2 * i + 1] = float_to_bf16(x2 * c + x1 * s);
}
