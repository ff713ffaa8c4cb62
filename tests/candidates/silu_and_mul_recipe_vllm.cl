// silu_and_mul_recipe_vllm: vLLM's rounding order (csrc/activation_kernels.cu: silu_kernel returns
// the input type T, act_and_mul multiplies two T): silu(g) in fp32, rounded to bf16, then the bf16
// product rounded again. Up to 1.5 ulp from the exact value; the task's contract admits it against
// its own value (docs/ml-checks.md). A test kernel: it must pass.
// kevo: tune BX 256 128 512 64
// kevo: launch silu_and_mul block=BX,1
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

__kernel void silu_and_mul(__global const ushort* x, __global ushort* out, uint d, uint tokens)
{
    const uint i = (uint)get_global_id(0), t = (uint)get_global_id(1);
    if (i >= d || t >= tokens) return;
    const float g = bf16_to_float(x[(size_t)t * 2 * d + i]);
    const float u = bf16_to_float(x[(size_t)t * 2 * d + d + i]);
    const float silu = bf16_to_float(float_to_bf16(g / (1.0f + exp(-g))));  // T silu_kernel(const T&)
    // The product of two bf16 is exact in fp32, so rounding it once is __hmul's result.
    out[(size_t)t * d + i] = float_to_bf16(silu * u);
}
