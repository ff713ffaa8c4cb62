// fused_moe recipe_reference: the device reference's second value (kevo runs it beside the seed
// where a size's reference is computed on the device, not a kernel to optimise): the seed with
// vLLM's fused_experts rounding order, the contract's admitted recipe (g and u stored as bf16,
// silu(g) rounded to bf16, act = bf16(silu_b * u_b), each expert's weighted output rounded to bf16
// and the k of them summed in bf16, as moe_sum does).
// bf16 is stored as ushort.
// kevo: tune BX 64 128 256
// kevo: launch moe_gate_up block=BX,1
// kevo: launch moe_down block=BX,1
#ifndef BX
#define BX 64
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

__kernel void moe_align(__global const int* topk_ids, __global int* expert_offsets, __global int* sorted_pairs, uint pairs, uint experts)
{
    __local int cursor[1024];  // experts <= 1024
    if (get_global_id(0) != 0) return;
    for (uint e = 0; e < experts; ++e) cursor[e] = 0;
    for (uint p = 0; p < pairs; ++p) cursor[topk_ids[p]] += 1;
    int total = 0;
    for (uint e = 0; e < experts; ++e) {
        const int n = cursor[e];
        expert_offsets[e] = cursor[e] = total;
        total += n;
    }
    expert_offsets[experts] = total;
    for (uint p = 0; p < pairs; ++p) sorted_pairs[cursor[topk_ids[p]]++] = (int)p;  // stable
}

__kernel void moe_gate_up(__global const ushort* x, __global const ushort* w13, __global const int* topk_ids, __global const int* expert_offsets, __global const int* sorted_pairs, __global ushort* act, uint tokens, uint topk, uint experts, uint hidden, uint inter)
{
    const uint i = (uint)get_global_id(0), p = (uint)get_global_id(1);
    if (i >= inter || p >= tokens * topk) return;
    const uint t = p / topk, e = (uint)topk_ids[p];
    __global const ushort* wg = w13 + ((size_t)e * 2 * inter + i) * hidden;
    __global const ushort* wu = wg + (size_t)inter * hidden;
    __global const ushort* xr = x + (size_t)t * hidden;
    float g = 0.0f, u = 0.0f;
    for (uint h = 0; h < hidden; ++h) {
        const float xv = bf16_to_float(xr[h]);
        g += bf16_to_float(wg[h]) * xv;
        u += bf16_to_float(wu[h]) * xv;
    }
    const float gb = bf16_to_float(float_to_bf16(g)), ub = bf16_to_float(float_to_bf16(u));
    const float sb = bf16_to_float(float_to_bf16(gb / (1.0f + exp(-gb))));
    act[(size_t)p * inter + i] = float_to_bf16(sb * ub);
}

__kernel void moe_down(__global const ushort* act, __global const ushort* w2, __global const int* topk_ids, __global const float* topk_weights, __global const int* expert_offsets, __global const int* sorted_pairs, __global float* accum, uint tokens, uint topk, uint experts, uint hidden, uint inter)
{
    const uint h = (uint)get_global_id(0), t = (uint)get_global_id(1);
    if (h >= hidden || t >= tokens) return;
    float sum = 0.0f;
    for (uint j = 0; j < topk; ++j) {
        const uint p = t * topk + j, e = (uint)topk_ids[p];
        __global const ushort* row = w2 + ((size_t)e * hidden + h) * inter;
        __global const ushort* a = act + (size_t)p * inter;
        float y = 0.0f;
        for (uint i = 0; i < inter; ++i) y += bf16_to_float(row[i]) * bf16_to_float(a[i]);
        const float yb = bf16_to_float(float_to_bf16(topk_weights[p] * y));
        sum = j == 0 ? yb : bf16_to_float(float_to_bf16(sum + yb));
    }
    accum[(size_t)t * hidden + h] = sum;
}

__kernel void moe_finalize(__global const float* accum, __global ushort* out, uint count)
{
    const uint n = (uint)get_global_id(0);
    if (n < count) out[n] = float_to_bf16(accum[n]);
}
