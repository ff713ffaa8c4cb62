// moe_align, wrong (a test candidate): the padding rows hold -1 instead of the sentinel tokens * topk. Rejected in the nominal trial.
// kevo: tune BX 256 128 64
// kevo: launch topk_softmax block=BX,1
// kevo: launch grouped_topk block=BX,1
// kevo: launch moe_align_scatter block=BX
#ifndef BX
#define BX 256
#endif
#define MAX_TOPK 16
#define MAX_GROUPS 32

__kernel void topk_softmax(__global const float* gating_output, __global float* topk_weights, __global int* topk_ids, uint tokens, uint experts, uint topk, uint renormalize)
{
    const uint t = (uint)get_global_id(1);
    if (get_global_id(0) != 0 || t >= tokens) return;
    __global const float* l = gating_output + (size_t)t * experts;
    float m = l[0];
    for (uint e = 1; e < experts; ++e) m = fmax(m, l[e]);
    float sum = 0.0f;
    for (uint e = 0; e < experts; ++e) sum += exp(l[e] - m);
    int chosen[MAX_TOPK];
    float w[MAX_TOPK];
    float picked = 0.0f;
    for (uint j = 0; j < topk; ++j) {
        int best = -1;
        for (uint e = 0; e < experts; ++e) {
            int taken = 0;
            for (uint i = 0; i < j; ++i) taken |= chosen[i] == (int)e;
            if (!taken && (best < 0 || l[e] > l[best])) best = (int)e;  // strict: the lower index wins ties
        }
        chosen[j] = best;
        w[j] = exp(l[best] - m) / sum;
        picked += w[j];
    }
    for (uint j = 0; j < topk; ++j) {
        topk_ids[(size_t)t * topk + j] = chosen[j];
        topk_weights[(size_t)t * topk + j] = renormalize ? w[j] / picked : w[j];
    }
}

float biased(__global const float* l, __global const float* bias, uint e)
{
    return 1.0f / (1.0f + exp(-l[e])) + bias[e];
}

__kernel void grouped_topk(__global const float* gating_output, __global const float* correction_bias, __global float* topk_weights, __global int* topk_ids, uint tokens, uint experts, uint topk, uint n_group, uint topk_group, uint renormalize, float routed_scaling_factor)
{
    const uint t = (uint)get_global_id(1);
    if (get_global_id(0) != 0 || t >= tokens) return;
    __global const float* l = gating_output + (size_t)t * experts;
    const uint size = experts / n_group;
    // Each group's score: the sum of its two best biased scores.
    float score[MAX_GROUPS];
    for (uint g = 0; g < n_group; ++g) {
        float a = -INFINITY, b = -INFINITY;
        for (uint e = g * size; e < (g + 1) * size; ++e) {
            const float s = biased(l, correction_bias, e);
            if (s > a) { b = a; a = s; }
            else if (s > b) b = s;
        }
        score[g] = a + b;
    }
    // The topk_group best groups.
    uint kept = 0;
    for (uint j = 0; j < topk_group; ++j) {
        int best = -1;
        for (uint g = 0; g < n_group; ++g)
            if (!(kept >> g & 1u) && (best < 0 || score[g] > score[best])) best = (int)g;
        kept |= 1u << best;
    }
    // The topk best biased scores among the kept groups' experts; the weights are the sigmoids.
    int chosen[MAX_TOPK];
    float w[MAX_TOPK];
    float picked = 0.0f;
    for (uint j = 0; j < topk; ++j) {
        int best = -1;
        float best_s = 0.0f;
        for (uint e = 0; e < experts; ++e) {
            if (!(kept >> (e / size) & 1u)) continue;
            int taken = 0;
            for (uint i = 0; i < j; ++i) taken |= chosen[i] == (int)e;
            if (taken) continue;
            const float s = biased(l, correction_bias, e);
            if (best < 0 || s > best_s) { best = (int)e; best_s = s; }
        }
        chosen[j] = best;
        w[j] = 1.0f / (1.0f + exp(-l[best]));
        picked += w[j];
    }
    for (uint j = 0; j < topk; ++j) {
        topk_ids[(size_t)t * topk + j] = chosen[j];
        topk_weights[(size_t)t * topk + j] = (renormalize ? w[j] / picked : w[j]) * routed_scaling_factor;
    }
}

__kernel void moe_align_count(__global const int* topk_ids, __global int* sorted_token_ids, __global int* expert_ids, __global int* num_tokens_post_padded, __global int* cumsum, uint pairs, uint experts, uint block_size, uint capacity)
{
    if (get_global_id(0) != 0) return;
    for (uint e = 0; e < experts; ++e) cumsum[e] = 0;
    for (uint p = 0; p < pairs; ++p) cumsum[topk_ids[p]] += 1;
    int total = 0;
    for (uint e = 0; e < experts; ++e) {
        const int padded = (cumsum[e] + (int)block_size - 1) / (int)block_size * (int)block_size;
        for (int r = total; r < total + padded; r += (int)block_size) expert_ids[r / (int)block_size] = (int)e;
        cumsum[e] = total;  // the expert's first row: the scatter's cursor
        total += padded;
    }
    cumsum[experts] = total;
    num_tokens_post_padded[0] = total;
    const uint blocks = (capacity + block_size - 1) / block_size;
    for (uint b = (uint)total / block_size; b < blocks; ++b) expert_ids[b] = 0;
    for (uint r = 0; r < capacity; ++r) sorted_token_ids[r] = -1;  // WRONG: -1, not pairs
}

__kernel void moe_align_scatter(__global const int* topk_ids, __global int* sorted_token_ids, __global int* cumsum, uint pairs, uint experts)
{
    const uint p = (uint)get_global_id(0);
    if (p >= pairs) return;
    const int e = topk_ids[p];
    if (e < 0 || (uint)e >= experts) return;
    sorted_token_ids[atomic_inc(&cumsum[e])] = (int)p;
}
