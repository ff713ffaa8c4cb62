// rope best-known OpenCL kernel: four rotation pairs per work-item through vload4/vstore4 of both
// halves and of the cos and sin rows (d/2 is a multiple of 4), neox layout, in place.
// kevo: tune BX 64 128 256 32
// kevo: launch rope block=BX,1 per_thread=4,1
#ifndef BX
#define BX 64
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

float4 bf16x4_to_float(ushort4 h) { return as_float4(convert_uint4(h) << 16); }

ushort4 float4_to_bf16(float4 f)
{
    return (ushort4)(float_to_bf16(f.s0), float_to_bf16(f.s1), float_to_bf16(f.s2), float_to_bf16(f.s3));
}

__kernel void rope(__global const int* positions, __global ushort* q, __global ushort* k, __global const float* cos_sin_cache, uint head_dim, uint q_heads, uint kv_heads, uint tokens)
{
    const uint p = (uint)get_global_id(0) * 4, t = (uint)get_global_id(1);
    const uint half_dim = head_dim / 2;
    if (t >= tokens || p >= (q_heads + kv_heads) * half_dim) return;
    const uint head = p / half_dim, i = p % half_dim;
    __global ushort* row = head < q_heads ? q + ((size_t)t * q_heads + head) * head_dim
                                          : k + ((size_t)t * kv_heads + (head - q_heads)) * head_dim;
    __global const float* cs = cos_sin_cache + (size_t)positions[t] * head_dim;
    const float4 c = vload4(0, cs + i), s = vload4(0, cs + half_dim + i);
    const float4 x1 = bf16x4_to_float(vload4(0, row + i)), x2 = bf16x4_to_float(vload4(0, row + half_dim + i));
    vstore4(float4_to_bf16(x1 * c - x2 * s), 0, row + i);
    vstore4(float4_to_bf16(x2 * c + x1 * s), 0, row + half_dim + i);
}
