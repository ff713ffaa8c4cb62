// gemm_fp8_block_recipe_bf16_mma: e4m3 widened to bf16 (exact: 3 mantissa bits fit in 7) and fed
// to a bf16 MMA, k16 steps accumulated in fp32, each 128-wide block's partial scaled by a_scale *
// b_scale and added in fp32 (the recipe of fp8 GEMMs on GPUs without fp8 MMA). Must pass.
// kevo: tune BX 64 128 256 32
// kevo: launch gemm_fp8_block block=BX,1
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#ifndef BX
#define BX 64
#endif

__device__ __forceinline__ float e4m3_to_float(unsigned char bits)
{
    return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)bits, __NV_E4M3)));
}

extern "C" __global__ void gemm_fp8_block(const unsigned char* a, const float* a_scale, const unsigned char* b, const float* b_scale, __nv_bfloat16* c, unsigned m, unsigned n, unsigned k)
{
    const unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= n || row >= m) return;
    const unsigned blocks = k / 128;
    const unsigned char* a_row = a + (size_t)row * k;
    const unsigned char* b_row = b + (size_t)col * k;
    float total = 0.0f;
    for (unsigned kb = 0; kb < blocks; ++kb) {
        float sum = 0.0f;
        for (unsigned c0 = kb * 128; c0 < kb * 128 + 128; c0 += 16) {
            float step = 0.0f;  // one k16 bf16 MMA step
            for (unsigned i = c0; i < c0 + 16; ++i) step = fmaf(e4m3_to_float(a_row[i]), e4m3_to_float(b_row[i]), step);
            sum += step;
        }
        total += sum * (a_scale[(size_t)row * blocks + kb] * b_scale[(size_t)(col / 128) * blocks + kb]);
    }
    c[(size_t)row * n + col] = __float2bfloat16_rn(total);
}
