// fused_moe recipe_reference: the device reference's second value (kevo runs it beside the seed
// where a size's reference is computed on the device, not a kernel to optimise): the seed with
// vLLM's fused_experts rounding order, the contract's admitted recipe (g and u stored as bf16,
// silu(g) rounded to bf16, act = bf16(silu_b * u_b), each expert's weighted output rounded to bf16
// and the k of them summed in bf16, as moe_sum does).
// kevo: tune BX 64 128 256
// kevo: launch moe_gate_up block=BX,1
// kevo: launch moe_down block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 64
#endif

extern "C" __global__ void moe_align(const int* topk_ids, int* expert_offsets, int* sorted_pairs, unsigned pairs, unsigned experts)
{
    __shared__ int cursor[1024];  // experts <= 1024
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (unsigned e = 0; e < experts; ++e) cursor[e] = 0;
    for (unsigned p = 0; p < pairs; ++p) cursor[topk_ids[p]] += 1;
    int total = 0;
    for (unsigned e = 0; e < experts; ++e) {
        const int n = cursor[e];
        expert_offsets[e] = cursor[e] = total;
        total += n;
    }
    expert_offsets[experts] = total;
    for (unsigned p = 0; p < pairs; ++p) sorted_pairs[cursor[topk_ids[p]]++] = (int)p;  // stable
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
