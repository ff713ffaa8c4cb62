// gemm_bf16_bf16_accumulate: the seed, but the running sum is kept in bf16 (rounded after every
// multiply-add), as a kernel with a bf16 accumulator would: 2^-9 relative per addition.
// kevo: tune BX 16 32 8
// kevo: tune BY 16 8 4
// kevo: launch gemm_bf16 block=BX,BY
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
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

__kernel void gemm_bf16(__global const ushort* a, __global const ushort* b, __global ushort* c, uint m, uint n, uint k)
{
    const uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);
    if (col >= n || row >= m) return;
    __global const ushort* a_row = a + (size_t)row * k;
    __global const ushort* b_row = b + (size_t)col * k;
    float sum = 0.0f;
    for (uint p = 0; p < k; ++p)
        sum = bf16_to_float(float_to_bf16(fma(bf16_to_float(a_row[p]), bf16_to_float(b_row[p]), sum)));  // WRONG: bf16 sum
    c[(size_t)row * n + col] = float_to_bf16(sum);
}
