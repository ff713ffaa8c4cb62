// per_token_group_quant_fp8, best known (OpenCL): one work-item per 128-element group that reads its
// group once, as sixteen ushort8 vectors kept in private memory, takes amax over them, divides in
// fp32 and writes the e4m3 bytes as sixteen uchar8 vectors (nearest even, saturating, -0 kept). The
// domain is hidden x tokens elements; per_thread=128 gives one work-item per group, and BY rows per
// work-group keep short rows (few groups) from leaving work-groups mostly empty.
// kevo: tune BX 8 16 32 4
// kevo: tune BY 4 1 8
// kevo: launch per_token_group_quant_fp8 block=BX,BY per_thread=128,1
#ifndef BX
#define BX 8
#endif

// v finite with |v| <= 448; nearest even; the sign of v is kept (-0 -> 0x80).
uchar float_to_e4m3(float v)
{
    const uint u = as_uint(v);
    const uchar sign = (uchar)((u >> 24) & 0x80u);
    const float a = fabs(v);
    if (a < 0x1.0p-6f) return sign | (uchar)rint(a * 512.0f);  // multiples of 2^-9 (0x08 is 2^-6)
    uint b = as_uint(a);
    b += 0x7ffffu + ((b >> 20) & 1u);
    const uint e = (b >> 23) - 120u, m = (b >> 20) & 7u;
    if (e > 15u || (e == 15u && m == 7u)) return sign | 0x7eu;
    return sign | (uchar)((e << 3) | m);
}

float8 widen(ushort8 h)
{
    return as_float8(convert_uint8(h) << 16);
}

__kernel void per_token_group_quant_fp8(__global const ushort* x, __global uchar* q, __global float* scales, uint hidden, uint tokens, float eps)
{
    const uint group = (uint)get_global_id(0), t = (uint)get_global_id(1);
    const uint groups = hidden / 128u;
    if (group >= groups || t >= tokens) return;
    const size_t base = (size_t)t * hidden + (size_t)group * 128u;
    float8 v[16];
    float8 m8 = (float8)(0.0f);
    for (int k = 0; k < 16; ++k) {
        v[k] = widen(vload8(0, x + base + 8 * k));
        m8 = fmax(m8, fabs(v[k]));
    }
    const float4 m4 = fmax(m8.lo, m8.hi);
    const float2 m2 = fmax(m4.lo, m4.hi);
    const float amax = fmax(m2.x, m2.y);
    const float s = fmax(amax, eps) / 448.0f;
    scales[(size_t)t * groups + group] = s;
    for (int k = 0; k < 16; ++k) {
        const float8 r = v[k] / s;
        const uchar8 b = (uchar8)(float_to_e4m3(r.s0), float_to_e4m3(r.s1), float_to_e4m3(r.s2), float_to_e4m3(r.s3),
                                  float_to_e4m3(r.s4), float_to_e4m3(r.s5), float_to_e4m3(r.s6), float_to_e4m3(r.s7));
        vstore8(b, 0, q + base + 8 * k);
    }
}
