// gemm_w4a16 best-known OpenCL kernel: each work-item computes one column n for four rows of A, so
// every int4 weight is unpacked once and used four times; a byte gives two weights at once, and
// each group of 128 products is summed in fp32 before its bf16 scale is applied (one multiply per
// group instead of one per weight). The sums stay in fp32 and are rounded to bf16 once.
// The launch covers the (N, M) domain with four rows per work-item: per_thread=1,4.
// kevo: tune BX 64 128 32
// kevo: launch gemm_w4a16 block=BX,1 per_thread=1,4
#ifndef BX
#define BX 64
#endif
#define MR 4

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

// A 4-bit two's-complement nibble as a float.
float int4_value(uint nibble) { return (float)((int)nibble - (int)((nibble & 8u) << 1)); }

__kernel void gemm_w4a16(__global const ushort* a, __global const uchar* b, __global const ushort* scales, __global ushort* c, uint m, uint n, uint k)
{
    const uint col = (uint)get_global_id(0), row0 = (uint)get_global_id(1) * MR;
    if (col >= n || row0 >= m) return;
    const uint rows = min((uint)MR, m - row0);
    __global const uchar* b_row = b + (size_t)col * (k / 2);
    float acc[MR] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint g = 0; g < k / 128; ++g) {
        float part[MR] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint i = 0; i < 64; ++i) {
            const uint byte = b_row[g * 64 + i];
            const float lo = int4_value(byte & 15u), hi = int4_value(byte >> 4);
            const size_t kk = (size_t)g * 128 + 2 * i;
            for (uint r = 0; r < rows; ++r) {
                __global const ushort* a_row = a + (size_t)(row0 + r) * k;
                part[r] += bf16_to_float(a_row[kk]) * lo + bf16_to_float(a_row[kk + 1]) * hi;
            }
        }
        const float s = bf16_to_float(scales[(size_t)col * (k / 128) + g]);
        for (uint r = 0; r < rows; ++r) acc[r] += part[r] * s;
    }
    for (uint r = 0; r < rows; ++r) c[(size_t)(row0 + r) * n + col] = float_to_bf16(acc[r]);
}
