// gemm_w8a8_recipe_cutlass: CUTLASS scaled_mm's numerics as vLLM uses them (the production recipe
// the contract admits): the exact int32 sum, then the epilogue D = bf16(a_scale * (b_scale *
// float(acc))) (ScaleA applied to ScaleB x Accum, both in fp32, one rounding to bf16). Must pass.
// kevo: tune BX 16 32 8
// kevo: tune BY 16 8 4
// kevo: launch gemm_w8a8 block=BX,BY
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel void gemm_w8a8(__global const char* a, __global const float* a_scale, __global const char* b, __global const float* b_scale, __global ushort* c, uint m, uint n, uint k)
{
    const uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);
    if (col >= n || row >= m) return;
    __global const char* a_row = a + (size_t)row * k;
    __global const char* b_row = b + (size_t)col * k;
    int sum = 0;
    for (uint p = 0; p < k; ++p) sum += (int)a_row[p] * (int)b_row[p];
    c[(size_t)row * n + col] = float_to_bf16(a_scale[row] * (b_scale[col] * (float)sum));  // CUTLASS: ScaleA(ScaleB(acc))
}
