// gemm_w8a8_slightly_wrong: the seed, but the int32 sum is rounded to bf16 before the scales are
// applied (two roundings, up to an ulp off), which the check must reject.
// kevo: tune BX 16 32 64 8
// kevo: tune BY 16 8 4
// kevo: launch gemm_w8a8 block=BX,BY
#include <cuda_bf16.h>
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

extern "C" __global__ void gemm_w8a8(const signed char* a, const float* a_scale, const signed char* b, const float* b_scale, __nv_bfloat16* c, unsigned m, unsigned n, unsigned k)
{
    const unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= n || row >= m) return;
    const signed char* a_row = a + (size_t)row * k;
    const signed char* b_row = b + (size_t)col * k;
    int sum = 0;
    for (unsigned p = 0; p < k; ++p) sum += (int)a_row[p] * (int)b_row[p];
    c[(size_t)row * n + col] = __float2bfloat16_rn(a_scale[row] * b_scale[col] * __bfloat162float(__float2bfloat16_rn((float)sum)))  /* WRONG */;
}
