// gemm_bf16_recipe_splitk: cuBLAS-style split-K (the production recipe the contract admits for a
// tall K): four fp32 partial sums over quarters of K, each over k16 chunks as an MMA adds them,
// reduced in fp32 and rounded once to bf16. Must pass.
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
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const uint quarter = k / 4;  // K is a multiple of 64
    for (uint s = 0; s < 4; ++s)
        for (uint p0 = s * quarter; p0 < (s + 1) * quarter; p0 += 16) {
            float chunk = 0.0f;  // one k16 MMA step: its 16 products summed, then added to the partial
            for (uint p = p0; p < p0 + 16; ++p) chunk = fma(bf16_to_float(a_row[p]), bf16_to_float(b_row[p]), chunk);
            part[s] += chunk;
        }
    const float sum = (part[0] + part[1]) + (part[2] + part[3]);
    c[(size_t)row * n + col] = float_to_bf16(sum);
}
