// gemm_w4a16 recipe_reference: the device reference's second value (kevo runs it beside the seed
// where a size's reference is computed on the device, not a kernel to optimise): the seed with
// Marlin's 16-bit dequantised weight bf16(q * s), the contract's second admitted recipe.
// kevo: tune BX 64 128 256 32
// kevo: launch gemm_w4a16 block=BX,1
#ifndef BX
#define BX 64
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

// Element i of a row of packed int4: nibble (i & 1) of byte i / 2, sign-extended from 4 bits.
int int4_at(__global const uchar* row, uint i)
{
    const uint nibble = ((uint)row[i >> 1] >> ((i & 1u) * 4u)) & 15u;
    return (int)nibble - (int)((nibble & 8u) << 1);
}

__kernel void gemm_w4a16(__global const ushort* a, __global const uchar* b, __global const ushort* scales, __global ushort* c, uint m, uint n, uint k)
{
    const uint col = (uint)get_global_id(0), row = (uint)get_global_id(1);
    if (col >= n || row >= m) return;
    __global const ushort* a_row = a + (size_t)row * k;
    __global const uchar* b_row = b + (size_t)col * (k / 2);
    __global const ushort* s_row = scales + (size_t)col * (k / 128);
    float sum = 0.0f;
    for (uint i = 0; i < k; ++i)
        sum += bf16_to_float(a_row[i]) * bf16_to_float(float_to_bf16((float)int4_at(b_row, i) * bf16_to_float(s_row[i / 128])));
    c[(size_t)row * n + col] = float_to_bf16(sum);
}
