// per_token_group_quant_fp8_only_ties_away: the e4m3 rounding sends ties away from zero instead of
// to even (round-half-up on the significand and on the subnormal grid). It differs from the right
// byte only where x / s is exactly an e4m3 midpoint: the outlier trial plants two groups of exact
// midpoints in every size (nominal data holds a few by chance: amax = 1.75 2^k makes s exact).
// kevo: tune BX 16 32 64 8
// kevo: launch per_token_group_quant_fp8 block=BX,1 per_thread=128,1
#ifndef BX
#define BX 16
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// v finite with |v| <= 448 (clamped by the caller); nearest even; the sign of v is kept (-0 -> 0x80).
uchar float_to_e4m3(float v)
{
    const uint u = as_uint(v);
    const uchar sign = (uchar)((u >> 24) & 0x80u);
    const float a = fabs(v);
    if (a < 0x1.0p-6f) {
        // Subnormal range: multiples of 2^-9; rint rounds to nearest even, 8 * 2^-9 is the smallest normal (0x08).
        return sign | (uchar)round(a * 512.0f);  // WRONG: ties away from zero
    }
    uint b = as_uint(a);
    b += 0x80000u;  // WRONG: ties away from zero
    const uint e = (b >> 23) - 120u, m = (b >> 20) & 7u;
    if (e > 15u || (e == 15u && m == 7u)) return sign | 0x7eu;  // beyond 448: saturate
    return sign | (uchar)((e << 3) | m);
}

__kernel void per_token_group_quant_fp8(__global const ushort* x, __global uchar* q, __global float* scales, uint hidden, uint tokens, float eps)
{
    const uint group = (uint)get_global_id(0), t = (uint)get_global_id(1);
    const uint groups = hidden / 128u;
    if (group >= groups || t >= tokens) return;
    const size_t base = (size_t)t * hidden + (size_t)group * 128u;
    float amax = 0.0f;
    for (uint i = 0; i < 128u; ++i) amax = fmax(amax, fabs(bf16_to_float(x[base + i])));
    const float s = fmax(amax, eps) / 448.0f;
    scales[(size_t)t * groups + group] = s;
    for (uint i = 0; i < 128u; ++i) {
        const float v = clamp(bf16_to_float(x[base + i]) / s, -448.0f, 448.0f);
        q[base + i] = float_to_e4m3(v);
    }
}
