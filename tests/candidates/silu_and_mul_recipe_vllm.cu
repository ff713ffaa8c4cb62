// silu_and_mul_recipe_vllm: vLLM's rounding order (csrc/activation_kernels.cu: silu_kernel returns
// the input type T, act_and_mul multiplies two T): silu(g) in fp32, rounded to bf16, then the bf16
// product (__hmul) rounded again. Up to 1.5 ulp from the exact value; the task's contract admits it
// against its own value (docs/ml-checks.md). A test kernel: it must pass.
// kevo: tune BX 256 128 512 64
// kevo: launch silu_and_mul block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 256
#endif

extern "C" __global__ void silu_and_mul(const __nv_bfloat16* x, __nv_bfloat16* out, unsigned d, unsigned tokens)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= d || t >= tokens) return;
    const float g = __bfloat162float(x[(size_t)t * 2 * d + i]);
    const __nv_bfloat16 silu = __float2bfloat16(g / (1.0f + expf(-g)));  // T silu_kernel(const T&)
    out[(size_t)t * d + i] = __hmul(silu, x[(size_t)t * 2 * d + d + i]);
}
