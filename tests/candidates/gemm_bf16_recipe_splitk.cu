// gemm_bf16_recipe_splitk: cuBLAS-style split-K (the production recipe the contract admits for a
// tall K): four fp32 partial sums over quarters of K, each over k16 chunks as an MMA adds them,
// reduced in fp32 and rounded once to bf16. Must pass.
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
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const unsigned quarter = k / 4;  // K is a multiple of 64
    for (unsigned s = 0; s < 4; ++s)
        for (unsigned p0 = s * quarter; p0 < (s + 1) * quarter; p0 += 16) {
            float chunk = 0.0f;  // one k16 MMA step: its 16 products summed, then added to the partial
            for (unsigned p = p0; p < p0 + 16; ++p) chunk = fmaf(__bfloat162float(a_row[p]), __bfloat162float(b_row[p]), chunk);
            part[s] += chunk;
        }
    const float sum = (part[0] + part[1]) + (part[2] + part[3]);
    c[(size_t)row * n + col] = __float2bfloat16_rn(sum);
}
