// gemm_fp8_block_recipe_bf16_mma: e4m3 widened to bf16 (exact: 3 mantissa bits fit in 7) and fed
// to a bf16 MMA, k16 steps accumulated in fp32, each 128-wide block's partial scaled by a_scale *
// b_scale and added in fp32 (the recipe of fp8 GEMMs on GPUs without fp8 MMA). Must pass.
// kevo: tune BX 64 128 256 32
// kevo: launch gemm_fp8_block block=BX,1
#ifndef BX
#define BX 64
#endif

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

// Exact: a normal e4m3 is 2^(e-7) (1 + m/8); a subnormal (e = 0) is m 2^-9.
float e4m3_to_float(uchar bits)
{
    const uint e = (bits >> 3) & 15u, mant = bits & 7u;
    const float sign = (bits & 0x80u) ? -1.0f : 1.0f;
    if (e == 15u && mant == 7u) return as_float(0x7fc00000u);
    if (e == 0u) return sign * (float)mant * 0x1.0p-9f;
    return sign * as_float(((e + 120u) << 23) | (mant << 20));
}

__kernel void gemm_fp8_block(__global const uchar* a, __global const float* a_scale, __global const uchar* b, __global const float* b_scale, __global ushort* c, uint m, uint n, uint k)
{
    const uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);
    if (col >= n || row >= m) return;
    const uint blocks = k / 128;
    __global const uchar* a_row = a + (size_t)row * k;
    __global const uchar* b_row = b + (size_t)col * k;
    float total = 0.0f;
    for (uint kb = 0; kb < blocks; ++kb) {
        float sum = 0.0f;
        for (uint c0 = kb * 128; c0 < kb * 128 + 128; c0 += 16) {
            float step = 0.0f;  // one k16 bf16 MMA step
            for (uint i = c0; i < c0 + 16; ++i) step = fma(e4m3_to_float(a_row[i]), e4m3_to_float(b_row[i]), step);
            sum += step;
        }
        total += sum * (a_scale[(size_t)row * blocks + kb] * b_scale[(size_t)(col / 128) * blocks + kb]);
    }
    c[(size_t)row * n + col] = float_to_bf16(total);
}
