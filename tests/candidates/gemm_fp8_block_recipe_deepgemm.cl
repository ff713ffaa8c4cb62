// gemm_fp8_block_recipe_deepgemm: DeepGEMM's numerics (the production recipe the contract admits):
// within each 128-wide K block four k32 fp8 MMAs, each adding its 32 exact e4m3 products to the
// running partial with every addend truncated to 14 significant bits of the largest one (what
// Hopper's fp8 tensor-core adder keeps), then the partial promoted to fp32: scaled by
// a_scale * b_scale and added to the fp32 total (DeepGEMM's promotion every 128 K). Must pass.
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
        for (uint c0 = kb * 128; c0 < kb * 128 + 128; c0 += 32) {
            float prod[32];
            float top = fabs(sum);
            for (uint i = 0; i < 32; ++i) {
                prod[i] = e4m3_to_float(a_row[c0 + i]) * e4m3_to_float(b_row[c0 + i]);  // exact in fp32
                top = fmax(top, fabs(prod[i]));
            }
            if (top > 0.0f) {
                const float quantum = ldexp(1.0f, ilogb(top) - 13);  // 14 significant bits of the largest
                float acc = trunc(sum / quantum) * quantum;
                for (uint i = 0; i < 32; ++i) acc += trunc(prod[i] / quantum) * quantum;  // exact: all on one grid
                sum = acc;
            }
        }
        total += sum * (a_scale[(size_t)row * blocks + kb] * b_scale[(size_t)(col / 128) * blocks + kb]);
    }
    c[(size_t)row * n + col] = float_to_bf16(total);
}
