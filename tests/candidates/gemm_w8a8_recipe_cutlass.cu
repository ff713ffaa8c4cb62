// gemm_w8a8_recipe_cutlass: CUTLASS scaled_mm's numerics as vLLM uses them (the production recipe
// the contract admits): the exact int32 sum, then the epilogue D = bf16(a_scale * (b_scale *
// float(acc))) (ScaleA applied to ScaleB x Accum, both in fp32, one rounding to bf16). Must pass.
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
    c[(size_t)row * n + col] = __float2bfloat16_rn(a_scale[row] * (b_scale[col] * (float)sum));  // CUTLASS: ScaleA(ScaleB(acc))
}
