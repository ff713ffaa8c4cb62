// per_token_group_quant_fp8_slightly_wrong: the scale divides by 447 instead of e4m3's 448, so every
// scale is 0.2% (thousands of fp32 ulps) too large and a few bytes shift; wrong on any data.
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
    const float s = __fdiv_rn(fmaxf(amax, eps), 447.0f);  // WRONG: e4m3's max is 448
    scales[(size_t)t * groups + group] = s;
    for (unsigned i = 0; i < 128u; ++i) {
        const float v = fminf(fmaxf(__fdiv_rn(__bfloat162float(x[base + i]), s), -448.0f), 448.0f);
        q[base + i] = (unsigned char)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
    }
}
