// add_rmsnorm_recipe_vllm: vLLM's rounding order (csrc/layernorm_kernels.cu, fused_add_rms_norm:
// `((scalar_t)(x * s_variance)) * weight[idx]`; HF LlamaRMSNorm's `weight * hidden.to(dtype)` is the
// same): the normalised value rounded to bf16, then the bf16 product with the weight rounded again.
// Up to 1.5 ulp from the exact value; the task's contract admits it against its own value
// (docs/ml-checks.md). A test kernel: it must pass.
// kevo: tune BX 256 128 512 64
// kevo: launch add_rmsnorm block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 256
#endif

extern "C" __global__ void add_rmsnorm(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* weight, __nv_bfloat16* y, unsigned hidden, unsigned tokens, float eps)
{
    __shared__ float partial[BX];  // BX is a power of two
    const unsigned t = blockIdx.y, lid = threadIdx.x;
    if (t >= tokens) return;  // uniform over the block
    const size_t base = (size_t)t * hidden;
    float sum = 0.0f;
    for (unsigned i = lid; i < hidden; i += BX) {
        // x + residual is exact in fp32; the stored residual is its one rounding to bf16, and the
        // norm is of the stored value.
        const __nv_bfloat16 r = __float2bfloat16_rn(__bfloat162float(x[base + i]) + __bfloat162float(residual[base + i]));
        residual[base + i] = r;
        const float rf = __bfloat162float(r);
        sum += rf * rf;
    }
    partial[lid] = sum;
    __syncthreads();
    for (unsigned s = BX / 2; s > 0; s >>= 1) {
        if (lid < s) partial[lid] += partial[lid + s];
        __syncthreads();
    }
    const float inv_rms = rsqrtf(partial[0] / (float)hidden + eps);
    for (unsigned i = lid; i < hidden; i += BX)
        y[base + i] = __hmul(__float2bfloat16_rn(__bfloat162float(residual[base + i]) * inv_rms), weight[i]);  // (scalar_t)(x * s_variance) * weight
}
