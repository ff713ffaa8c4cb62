// gemm_fp8_block best-known OpenCL kernel: each work-item computes one column n for four rows of A,
// so every e4m3 weight is decoded once and used four times; each 128-wide K block is summed in fp32
// per row, then promoted with a_scale[m, kb] * b_scale[n / 128, kb] into an fp32 total (the recipe's
// order, as on a tensor core), and each result is rounded to bf16 once.
// The launch covers the (N, M) domain with four rows per work-item: per_thread=1,4.
// kevo: tune BX 64 128 32
// kevo: launch gemm_fp8_block block=BX,1 per_thread=1,4
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

#define MR 4

__kernel void gemm_fp8_block(__global const uchar* a, __global const float* a_scale, __global const uchar* b, __global const float* b_scale, __global ushort* c, uint m, uint n, uint k)
{
    const uint col = (uint)get_global_id(0), row0 = (uint)get_global_id(1) * MR;
    if (col >= n || row0 >= m) return;
    const uint rows = min((uint)MR, m - row0), blocks = k / 128;
    __global const uchar* b_row = b + (size_t)col * k;
    float total[MR] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint kb = 0; kb < blocks; ++kb) {
        float sum[MR] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint i = kb * 128; i < kb * 128 + 128; ++i) {
            const float w = e4m3_to_float(b_row[i]);
            for (uint r = 0; r < rows; ++r) sum[r] += e4m3_to_float(a[(size_t)(row0 + r) * k + i]) * w;
        }
        const float bs = b_scale[(size_t)(col / 128) * blocks + kb];
        for (uint r = 0; r < rows; ++r) total[r] += sum[r] * (a_scale[(size_t)(row0 + r) * blocks + kb] * bs);
    }
    for (uint r = 0; r < rows; ++r) c[(size_t)(row0 + r) * n + col] = float_to_bf16(total[r]);
}
