// per_token_group_quant_fp8 seed (naive on purpose): one thread per 128-element group. It reads its
// group twice (once for amax, once to quantise), divides in fp32 (IEEE, __fdiv_rn) and converts
// with cuda_fp8.h (nearest even, saturating to +-448; the sign of -0 is kept).
// The domain is hidden x tokens elements; per_thread=128 gives one thread per group.
// kevo: tune BX 16 32 64 8
// kevo: launch per_token_group_quant_fp8 block=BX,1 per_thread=128,1
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#ifndef BX
#define BX 16
#endif

extern "C" __global__ void per_token_group_quant_fp8(const __nv_bfloat16* x, unsigned char* q, float* scales, unsigned hidden, unsigned tokens, float eps)
{
    const unsigned group = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned groups = hidden / 128u;
    if (group >= groups || t >= tokens) return;
    const size_t base = (size_t)t * hidden + (size_t)group * 128u;
    float amax = 0.0f;
    for (unsigned i = 0; i < 128u; ++i) amax = fmaxf(amax, fabsf(__bfloat162float(x[base + i])));
    const float s = __fdiv_rn(fmaxf(amax, eps), 448.0f);
    scales[(size_t)t * groups + group] = s;
    for (unsigned i = 0; i < 128u; ++i) {
        const float v = fminf(fmaxf(__fdiv_rn(__bfloat162float(x[base + i]), s), -448.0f), 448.0f);
        q[base + i] = (unsigned char)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
    }
}
