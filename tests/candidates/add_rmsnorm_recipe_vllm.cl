// add_rmsnorm_recipe_vllm: vLLM's rounding order (csrc/layernorm_kernels.cu, fused_add_rms_norm:
// `((scalar_t)(x * s_variance)) * weight[idx]`; HF LlamaRMSNorm's `weight * hidden.to(dtype)` is the
// same): the normalised value rounded to bf16, then the bf16 product with the weight rounded again.
// Up to 1.5 ulp from the exact value; the task's contract admits it against its own value
// (docs/ml-checks.md). A test kernel: it must pass.
// kevo: tune BX 256 128 512 64
// kevo: launch add_rmsnorm block=BX,1
#ifndef BX
#define BX 256
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel void add_rmsnorm(__global const ushort* x, __global ushort* residual, __global const ushort* weight, __global ushort* y, uint hidden, uint tokens, float eps)
{
    __local float partial[BX];  // BX is a power of two
    const uint t = (uint)get_group_id(1), lid = (uint)get_local_id(0);
    if (t >= tokens) return;  // uniform over the work-group
    const size_t base = (size_t)t * hidden;
    float sum = 0.0f;
    for (uint i = lid; i < hidden; i += BX) {
        // x + residual is exact in fp32; the stored residual is its one rounding to bf16, and the
        // norm is of the stored value.
        const ushort r = float_to_bf16(bf16_to_float(x[base + i]) + bf16_to_float(residual[base + i]));
        residual[base + i] = r;
        const float rf = bf16_to_float(r);
        sum += rf * rf;
    }
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = BX / 2; s > 0; s >>= 1) {
        if (lid < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv_rms = rsqrt(partial[0] / (float)hidden + eps);
    for (uint i = lid; i < hidden; i += BX)
        y[base + i] = float_to_bf16(bf16_to_float(float_to_bf16(bf16_to_float(residual[base + i]) * inv_rms)) * bf16_to_float(weight[i]));  // rounded twice, as vLLM does
}
