// silu_and_mul best-known OpenCL kernel: eight outputs per work-item through vload8/vstore8 (16-byte
// accesses), silu in fp32 with exp (not native_exp, whose error is implementation-defined).
// I is a multiple of 64, so a work-item's eight elements never straddle the end of a row.
// kevo: tune BX 128 256 64
// kevo: launch silu_and_mul block=BX,1 per_thread=8,1
#ifndef BX
#define BX 128
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

float silu_mul(ushort g_bits, ushort u_bits)
{
    const float g = bf16_to_float(g_bits);
    return g / (1.0f + exp(-g)) * bf16_to_float(u_bits);
}

__kernel void silu_and_mul(__global const ushort* x, __global ushort* out, uint d, uint tokens)
{
    const uint i = (uint)get_global_id(0) * 8, t = (uint)get_global_id(1);
    if (i >= d || t >= tokens) return;
    __global const ushort* row = x + (size_t)t * 2 * d;
    const ushort8 g = vload8(0, row + i), u = vload8(0, row + d + i);
    ushort8 r;
    r.s0 = float_to_bf16(silu_mul(g.s0, u.s0));
    r.s1 = float_to_bf16(silu_mul(g.s1, u.s1));
    r.s2 = float_to_bf16(silu_mul(g.s2, u.s2));
    r.s3 = float_to_bf16(silu_mul(g.s3, u.s3));
    r.s4 = float_to_bf16(silu_mul(g.s4, u.s4));
    r.s5 = float_to_bf16(silu_mul(g.s5, u.s5));
    r.s6 = float_to_bf16(silu_mul(g.s6, u.s6));
    r.s7 = float_to_bf16(silu_mul(g.s7, u.s7));
    vstore8(r, 0, out + (size_t)t * d + i);
}
