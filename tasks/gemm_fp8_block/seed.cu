// gemm_fp8_block seed (naive on purpose): one output element c[m, n] per thread. Each 128-wide K
// block's products are summed in fp32, the block sum is multiplied by a_scale[m, kb] *
// b_scale[n / 128, kb] and added to an fp32 total, rounded to bf16 once, at the store. e4m3 bytes are
// decoded exactly by cuda_fp8.h (e4m3 to half is exact).
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
        for (unsigned i = kb * 128; i < kb * 128 + 128; ++i) sum += e4m3_to_float(a_row[i]) * e4m3_to_float(b_row[i]);
        total += sum * (a_scale[(size_t)row * blocks + kb] * b_scale[(size_t)(col / 128) * blocks + kb]);
    }
    c[(size_t)row * n + col] = __float2bfloat16_rn(total);
}
