// per_token_group_quant_fp8_only_fixed_eps: eps hard-coded to vLLM's default 1e-10 instead of the
// eps argument. Right in the nominal trial (eps is 1e-10 there and no group is that small); the
// outlier trial passes eps = 1e-4 and holds an all-zero and a tiny group (amax ~1e-7), whose
// scale must be 1e-4 / 448: this kernel must fail there.
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
        return sign | (uchar)rint(a * 512.0f);
    }
    uint b = as_uint(a);
    b += 0x7ffffu + ((b >> 20) & 1u);  // round the fp32 significand to 3 bits, nearest even
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
    const float s = fmax(amax, 1e-10f) / 448.0f;  // WRONG: ignores the eps argument
    scales[(size_t)t * groups + group] = s;
    for (uint i = 0; i < 128u; ++i) {
        const float v = clamp(bf16_to_float(x[base + i]) / s, -448.0f, 448.0f);
        q[base + i] = float_to_e4m3(v);
    }
}
