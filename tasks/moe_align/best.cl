// moe_align best-known OpenCL kernel (for PoCL and other CPUs, and GPUs without warp shuffles).
// Gating: one work-item per token. topk_softmax makes one pass over the logits keeping the k best in
// a sorted private list (insertion; an equal logit stays behind the lower index), so the choice is
// made on the logits themselves, and a second pass for the softmax sum only when not renormalising
// (the renormalised weights need just the k chosen exponentials). grouped_topk makes one pass for the
// groups' top-2 sums and one, over the kept groups only, for the k best biased scores.
// moe_align_count is one work-group: a local-memory histogram, a serial scan over the experts, then
// expert_ids and the sentinel written in parallel, the sentinel only where no pair will land (each
// expert's padding rows and the rows past the used ones). moe_align_scatter: each work-group counts its
// PT x 256 pairs per expert in local memory, reserves one run of rows per expert with a single global
// atomic_add, and places its pairs inside that run.
// kevo: tune BY 64 32 16
// kevo: tune PT 4 8 2
// kevo: launch topk_softmax block=1,BY
// kevo: launch grouped_topk block=1,BY
// kevo: launch moe_align_count block=256
// kevo: launch moe_align_scatter block=256 per_thread=PT
#ifndef BY
#define BY 64
#endif
#ifndef PT
#define PT 4
#endif
#define MAX_TOPK 16
#define MAX_GROUPS 32
#define MAX_EXPERTS 1024

__kernel void topk_softmax(__global const float* gating_output, __global float* topk_weights, __global int* topk_ids, uint tokens, uint experts, uint topk, uint renormalize)
{
    const uint t = (uint)get_global_id(1);
    if (get_global_id(0) != 0 || t >= tokens) return;
    __global const float* l = gating_output + (size_t)t * experts;
    float v[MAX_TOPK];
    int id[MAX_TOPK];
    for (uint j = 0; j < topk; ++j) v[j] = -INFINITY, id[j] = -1;
    for (uint e = 0; e < experts; ++e) {
        const float x = l[e];
        if (!(x > v[topk - 1])) continue;
        uint j = topk - 1;
        while (j > 0 && x > v[j - 1]) {
            v[j] = v[j - 1];
            id[j] = id[j - 1];
            --j;
        }
        v[j] = x;
        id[j] = (int)e;
    }
    const float m = v[0];
    float denom = 0.0f;
    if (renormalize) {
        for (uint j = 0; j < topk; ++j) denom += exp(v[j] - m);
    } else {
        for (uint e = 0; e < experts; ++e) denom += exp(l[e] - m);
    }
    const float inv = 1.0f / denom;
    for (uint j = 0; j < topk; ++j) {
        topk_ids[(size_t)t * topk + j] = id[j];
        topk_weights[(size_t)t * topk + j] = exp(v[j] - m) * inv;
    }
}

__kernel void grouped_topk(__global const float* gating_output, __global const float* correction_bias, __global float* topk_weights, __global int* topk_ids, uint tokens, uint experts, uint topk, uint n_group, uint topk_group, uint renormalize, float routed_scaling_factor)
{
    const uint t = (uint)get_global_id(1);
    if (get_global_id(0) != 0 || t >= tokens) return;
    __global const float* l = gating_output + (size_t)t * experts;
    const uint size = experts / n_group;
    float score[MAX_GROUPS];
    for (uint g = 0; g < n_group; ++g) {
        float a = -INFINITY, b = -INFINITY;
        for (uint e = g * size; e < (g + 1) * size; ++e) {
            const float s = 1.0f / (1.0f + exp(-l[e])) + correction_bias[e];
            const float lo = fmin(a, s);
            a = fmax(a, s);
            b = fmax(b, lo);
        }
        score[g] = a + b;
    }
    uint kept = 0;
    for (uint j = 0; j < topk_group; ++j) {
        uint best = 0;
        float bs = -INFINITY;
        for (uint g = 0; g < n_group; ++g)
            if (!(kept >> g & 1u) && (score[g] > bs || bs == -INFINITY)) best = g, bs = score[g];
        kept |= 1u << best;
    }
    float v[MAX_TOPK];
    int id[MAX_TOPK];
    for (uint j = 0; j < topk; ++j) v[j] = -INFINITY, id[j] = -1;
    for (uint g = 0; g < n_group; ++g) {
        if (!(kept >> g & 1u)) continue;
        for (uint e = g * size; e < (g + 1) * size; ++e) {
            const float x = 1.0f / (1.0f + exp(-l[e])) + correction_bias[e];
            if (!(x > v[topk - 1]) && id[topk - 1] >= 0) continue;
            uint j = topk - 1;
            while (j > 0 && (x > v[j - 1] || id[j - 1] < 0)) {
                v[j] = v[j - 1];
                id[j] = id[j - 1];
                --j;
            }
            v[j] = x;
            id[j] = (int)e;
        }
    }
    float w[MAX_TOPK], sum = 0.0f;
    for (uint j = 0; j < topk; ++j) {
        w[j] = 1.0f / (1.0f + exp(-l[id[j]]));
        sum += w[j];
    }
    const float factor = renormalize ? routed_scaling_factor / sum : routed_scaling_factor;
    for (uint j = 0; j < topk; ++j) {
        topk_ids[(size_t)t * topk + j] = id[j];
        topk_weights[(size_t)t * topk + j] = w[j] * factor;
    }
}

__kernel void moe_align_count(__global const int* topk_ids, __global int* sorted_token_ids, __global int* expert_ids, __global int* num_tokens_post_padded, __global int* cumsum, uint pairs, uint experts, uint block_size, uint capacity)
{
    __local int count[MAX_EXPERTS];
    __local int offset[MAX_EXPERTS + 1];
    const uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);
    const int bs = (int)block_size;
    for (uint e = lid; e < experts; e += n) count[e] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint p = lid; p < pairs; p += n) atomic_inc(&count[topk_ids[p]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int total = 0;
        for (uint e = 0; e < experts; ++e) {
            offset[e] = total;
            total += (count[e] + bs - 1) / bs * bs;
        }
        offset[experts] = total;
        num_tokens_post_padded[0] = total;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int total = offset[experts];
    for (uint e = lid; e <= experts; e += n) cumsum[e] = offset[e];
    for (uint e = lid; e < experts; e += n) {
        for (int r = offset[e]; r < offset[e + 1]; r += bs) expert_ids[r / bs] = (int)e;
        for (int r = offset[e] + count[e]; r < offset[e + 1]; ++r) sorted_token_ids[r] = (int)pairs;
    }
    const uint blocks = (capacity + block_size - 1) / block_size;
    for (uint b = (uint)total / block_size + lid; b < blocks; b += n) expert_ids[b] = 0;
    for (uint r = (uint)total + lid; r < capacity; r += n) sorted_token_ids[r] = (int)pairs;
}

__kernel void moe_align_scatter(__global const int* topk_ids, __global int* sorted_token_ids, __global int* cumsum, uint pairs, uint experts)
{
    __local int count[MAX_EXPERTS];
    __local int base[MAX_EXPERTS];
    const uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);
    const uint first = (uint)get_group_id(0) * n * PT;
    for (uint e = lid; e < experts; e += n) count[e] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int ex[PT], rank[PT];
    for (uint i = 0; i < PT; ++i) {
        const uint p = first + i * n + lid;
        ex[i] = -1;
        if (p < pairs) {
            const int e = topk_ids[p];
            if (e >= 0 && (uint)e < experts) {
                ex[i] = e;
                rank[i] = atomic_inc(&count[e]);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint e = lid; e < experts; e += n)
        if (count[e]) base[e] = atomic_add(&cumsum[e], count[e]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < PT; ++i)
        if (ex[i] >= 0) sorted_token_ids[base[ex[i]] + rank[i]] = (int)(first + i * n + lid);
}
