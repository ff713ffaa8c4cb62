// gemm_bf16 seed (naive on purpose): one output element of C = A * B^T per thread, the K products
// summed in fp32 in order and rounded to bf16 once, at the store. Also the device reference at the
// sizes whose CPU reference would be too slow.
// kevo: tune BX 16 32 64 8
// kevo: tune BY 16 8 4
// kevo: launch gemm_bf16 block=BX,BY
#include <cuda_bf16.h>
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

extern "C" __global__ void gemm_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, unsigned m, unsigned n, unsigned k)
{
    const unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= n || row >= m) return;
    const __nv_bfloat16* a_row = a + (size_t)row * k;
    const __nv_bfloat16* b_row = b + (size_t)col * k;
    float sum = 0.0f;
    for (unsigned p = 0; p < k; ++p) sum = fmaf(__bfloat162float(a_row[p]), __bfloat162float(b_row[p]), sum);
    c[(size_t)row * n + col] = __float2bfloat16_rn(sum);
}
