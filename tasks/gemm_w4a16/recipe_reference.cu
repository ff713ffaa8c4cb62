// gemm_w4a16 recipe_reference: the device reference's second value (kevo runs it beside the seed
// where a size's reference is computed on the device, not a kernel to optimise): the seed with
// Marlin's 16-bit dequantised weight bf16(q * s), the contract's second admitted recipe.
// kevo: tune BX 64 128 256 32
// kevo: launch gemm_w4a16 block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 64
#endif

extern "C" __global__ void gemm_w4a16(const __nv_bfloat16* a, const unsigned char* b, const __nv_bfloat16* scales, __nv_bfloat16* c, unsigned m, unsigned n, unsigned k)
{
    const unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= n || row >= m) return;
    const __nv_bfloat16* a_row = a + (size_t)row * k;
    const unsigned char* b_row = b + (size_t)col * (k / 2);
    const __nv_bfloat16* s_row = scales + (size_t)col * (k / 128);
    float sum = 0.0f;
    for (unsigned i = 0; i < k; ++i) {
        const unsigned nibble = ((unsigned)b_row[i / 2] >> ((i & 1u) * 4u)) & 15u;
        const int q = (int)nibble - (int)((nibble & 8u) << 1);  // two's complement from 4 bits
        sum += __bfloat162float(a_row[i]) * __bfloat162float(__float2bfloat16_rn((float)q * __bfloat162float(s_row[i / 128])));
    }
    c[(size_t)row * n + col] = __float2bfloat16_rn(sum);
}
