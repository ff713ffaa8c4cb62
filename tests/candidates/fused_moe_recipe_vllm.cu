// fused_moe_recipe_vllm: vLLM's fused_experts rounding order (the production recipe the contract
// admits): g and u rounded to bf16 as fused_moe_kernel stores them, silu(g) rounded to bf16 as
// silu_and_mul's silu returns scalar_t, act = bf16(silu_b * u_b), each expert's weighted output
// rounded to bf16 (MUL_ROUTED_WEIGHT, then the bf16 store) and the k of them summed in bf16 (moe_sum).
// Must pass.
// kevo: tune BX 64 128 256
// kevo: launch moe_gate_up block=BX,1
// kevo: launch moe_down block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 64
#endif

extern "C" __global__ void moe_align(const int* topk_ids, int* expert_offsets, int* sorted_pairs, unsigned pairs, unsigned experts)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (unsigned e = 0; e <= experts; ++e) expert_offsets[e] = 0;
    for (unsigned p = 0; p < pairs; ++p) expert_offsets[topk_ids[p] + 1] += 1;
    for (unsigned e = 0; e < experts; ++e) expert_offsets[e + 1] += expert_offsets[e];
    // Stable scatter, one expert at a time (no cursor array needed).
    for (unsigned e = 0; e < experts; ++e) {
        int next = expert_offsets[e];
        for (unsigned p = 0; p < pairs; ++p)
            if (topk_ids[p] == (int)e) sorted_pairs[next++] = (int)p;
    }
}

extern "C" __global__ void moe_gate_up(const __nv_bfloat16* x, const __nv_bfloat16* w13, const int* topk_ids, const int* expert_offsets, const int* sorted_pairs, __nv_bfloat16* act, unsigned tokens, unsigned topk, unsigned experts, unsigned hidden, unsigned inter)
{
    // The blocks are walked pair-fastest over the pairs in expert order (sorted_pairs): the blocks
    // resident at once then share one column tile of a few experts' weights, which L2 holds, instead
    // of sweeping every column tile for one pair (the launch's x-fastest order), which streams the
    // weights from DRAM once per pair (minutes at Mixtral's prefill). Each output is the same sum.
    const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    const unsigned i = block / gridDim.y * blockDim.x + threadIdx.x, s = block % gridDim.y * blockDim.y + threadIdx.y;
    if (i >= inter || s >= tokens * topk) return;
    const unsigned p = (unsigned)sorted_pairs[s], t = p / topk, e = (unsigned)topk_ids[p];
    const __nv_bfloat16* wg = w13 + ((size_t)e * 2 * inter + i) * hidden;
    const __nv_bfloat16* wu = wg + (size_t)inter * hidden;
    const __nv_bfloat16* xr = x + (size_t)t * hidden;
    float g = 0.0f, u = 0.0f;
    for (unsigned h = 0; h < hidden; ++h) {
        const float xv = __bfloat162float(xr[h]);
        g += __bfloat162float(wg[h]) * xv;
        u += __bfloat162float(wu[h]) * xv;
    }
    // vLLM: g and u stored as bf16, silu(g) returned as bf16, the product of two bf16 rounded to bf16.
    const float gb = __bfloat162float(__float2bfloat16_rn(g)), ub = __bfloat162float(__float2bfloat16_rn(u));
    const float sb = __bfloat162float(__float2bfloat16_rn(gb / (1.0f + expf(-gb))));
    act[(size_t)p * inter + i] = __float2bfloat16_rn(sb * ub);
}

extern "C" __global__ void moe_down(const __nv_bfloat16* act, const __nv_bfloat16* w2, const int* topk_ids, const float* topk_weights, const int* expert_offsets, const int* sorted_pairs, float* accum, unsigned tokens, unsigned topk, unsigned experts, unsigned hidden, unsigned inter)
{
    // Token-fastest, for the same reason: the resident blocks share one row tile of every expert's W2.
    const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    const unsigned h = block / gridDim.y * blockDim.x + threadIdx.x, t = block % gridDim.y * blockDim.y + threadIdx.y;
    if (h >= hidden || t >= tokens) return;
    float sum = 0.0f;
    for (unsigned j = 0; j < topk; ++j) {
        const unsigned p = t * topk + j, e = (unsigned)topk_ids[p];
        const __nv_bfloat16* row = w2 + ((size_t)e * hidden + h) * inter;
        const __nv_bfloat16* a = act + (size_t)p * inter;
        float y = 0.0f;
        for (unsigned i = 0; i < inter; ++i) y += __bfloat162float(row[i]) * __bfloat162float(a[i]);
        // vLLM: the weighted expert output stored as bf16, the k of them summed in bf16 (moe_sum).
        const float yb = __bfloat162float(__float2bfloat16_rn(topk_weights[p] * y));
        sum = j == 0 ? yb : __bfloat162float(__float2bfloat16_rn(sum + yb));
    }
    accum[(size_t)t * hidden + h] = sum;
}

extern "C" __global__ void moe_finalize(const float* accum, __nv_bfloat16* out, unsigned count)
{
    const unsigned n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n < count) out[n] = __float2bfloat16_rn(accum[n]);
}
