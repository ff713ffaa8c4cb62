// gemm_fp8_block_recipe_deepgemm: DeepGEMM's numerics (the production recipe the contract admits):
// within each 128-wide K block four k32 fp8 MMAs, each adding its 32 exact e4m3 products to the
// running partial with every addend truncated to 14 significant bits of the largest one (what
// Hopper's fp8 tensor-core adder keeps), then the partial promoted to fp32: scaled by
// a_scale * b_scale and added to the fp32 total (DeepGEMM's promotion every 128 K). Must pass.
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
        for (unsigned c0 = kb * 128; c0 < kb * 128 + 128; c0 += 32) {
            float prod[32];
            float top = fabsf(sum);
            for (unsigned i = 0; i < 32; ++i) {
                prod[i] = e4m3_to_float(a_row[c0 + i]) * e4m3_to_float(b_row[c0 + i]);  // exact in fp32
                top = fmaxf(top, fabsf(prod[i]));
            }
            if (top > 0.0f) {
                const float quantum = ldexpf(1.0f, ilogbf(top) - 13);  // 14 significant bits of the largest
                float acc = truncf(sum / quantum) * quantum;
                for (unsigned i = 0; i < 32; ++i) acc += truncf(prod[i] / quantum) * quantum;  // exact: all on one grid
                sum = acc;
            }
        }
        total += sum * (a_scale[(size_t)row * blocks + kb] * b_scale[(size_t)(col / 128) * blocks + kb]);
    }
    c[(size_t)row * n + col] = __float2bfloat16_rn(total);
}
