// moe_align seed (naive on purpose): the first thread of each token's block does the whole gating of
// that token serially (k passes of argmax over the experts, the lower index first on equal scores);
// moe_align_count is one thread doing the counts, offsets, expert_ids and the sentinel fill;
// moe_align_scatter places one pair per thread at a cursor taken with atomicAdd (so each expert's
// pairs land in no fixed order).
// kevo: tune BX 256 128 64
// kevo: launch topk_softmax block=BX,1
// kevo: launch grouped_topk block=BX,1
// kevo: launch moe_align_scatter block=BX
#ifndef BX
#define BX 256
#endif
#define MAX_TOPK 16
#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no math.h)
#define MAX_GROUPS 32

extern "C" __global__ void topk_softmax(const float* gating_output, float* topk_weights, int* topk_ids, unsigned tokens, unsigned experts, unsigned topk, unsigned renormalize)
{
    const unsigned t = blockIdx.y * blockDim.y + threadIdx.y;
    if (blockIdx.x * blockDim.x + threadIdx.x != 0 || t >= tokens) return;
    const float* l = gating_output + (size_t)t * experts;
    float m = l[0];
    for (unsigned e = 1; e < experts; ++e) m = fmaxf(m, l[e]);
    float sum = 0.0f;
    for (unsigned e = 0; e < experts; ++e) sum += expf(l[e] - m);
    int chosen[MAX_TOPK];
    float w[MAX_TOPK];
    float picked = 0.0f;
    for (unsigned j = 0; j < topk; ++j) {
        int best = -1;
        for (unsigned e = 0; e < experts; ++e) {
            bool taken = false;
            for (unsigned i = 0; i < j; ++i) taken |= chosen[i] == (int)e;
            if (!taken && (best < 0 || l[e] > l[best])) best = (int)e;  // strict: the lower index wins ties
        }
        chosen[j] = best;
        w[j] = expf(l[best] - m) / sum;
        picked += w[j];
    }
    for (unsigned j = 0; j < topk; ++j) {
        topk_ids[(size_t)t * topk + j] = chosen[j];
        topk_weights[(size_t)t * topk + j] = renormalize ? w[j] / picked : w[j];
    }
}

__device__ float biased(const float* l, const float* bias, unsigned e)
{
    return 1.0f / (1.0f + expf(-l[e])) + bias[e];
}

extern "C" __global__ void grouped_topk(const float* gating_output, const float* correction_bias, float* topk_weights, int* topk_ids, unsigned tokens, unsigned experts, unsigned topk, unsigned n_group, unsigned topk_group, unsigned renormalize, float routed_scaling_factor)
{
    const unsigned t = blockIdx.y * blockDim.y + threadIdx.y;
    if (blockIdx.x * blockDim.x + threadIdx.x != 0 || t >= tokens) return;
    const float* l = gating_output + (size_t)t * experts;
    const unsigned size = experts / n_group;
    // Each group's score: the sum of its two best biased scores.
    float score[MAX_GROUPS];
    for (unsigned g = 0; g < n_group; ++g) {
        float a = NEG_INF, b = NEG_INF;
        for (unsigned e = g * size; e < (g + 1) * size; ++e) {
            const float s = biased(l, correction_bias, e);
            if (s > a) { b = a; a = s; }
            else if (s > b) b = s;
        }
        score[g] = a + b;
    }
    // The topk_group best groups.
    unsigned kept = 0;
    for (unsigned j = 0; j < topk_group; ++j) {
        int best = -1;
        for (unsigned g = 0; g < n_group; ++g)
            if (!(kept >> g & 1u) && (best < 0 || score[g] > score[best])) best = (int)g;
        kept |= 1u << best;
    }
    // The topk best biased scores among the kept groups' experts; the weights are the sigmoids.
    int chosen[MAX_TOPK];
    float w[MAX_TOPK];
    float picked = 0.0f;
    for (unsigned j = 0; j < topk; ++j) {
        int best = -1;
        float best_s = 0.0f;
        for (unsigned e = 0; e < experts; ++e) {
            if (!(kept >> (e / size) & 1u)) continue;
            bool taken = false;
            for (unsigned i = 0; i < j; ++i) taken |= chosen[i] == (int)e;
            if (taken) continue;
            const float s = biased(l, correction_bias, e);
            if (best < 0 || s > best_s) { best = (int)e; best_s = s; }
        }
        chosen[j] = best;
        w[j] = 1.0f / (1.0f + expf(-l[best]));
        picked += w[j];
    }
    for (unsigned j = 0; j < topk; ++j) {
        topk_ids[(size_t)t * topk + j] = chosen[j];
        topk_weights[(size_t)t * topk + j] = (renormalize ? w[j] / picked : w[j]) * routed_scaling_factor;
    }
}

extern "C" __global__ void moe_align_count(const int* topk_ids, int* sorted_token_ids, int* expert_ids, int* num_tokens_post_padded, int* cumsum, unsigned pairs, unsigned experts, unsigned block_size, unsigned capacity)
{
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    for (unsigned e = 0; e < experts; ++e) cumsum[e] = 0;
    for (unsigned p = 0; p < pairs; ++p) cumsum[topk_ids[p]] += 1;
    int total = 0;
    for (unsigned e = 0; e < experts; ++e) {
        const int padded = (cumsum[e] + (int)block_size - 1) / (int)block_size * (int)block_size;
        for (int r = total; r < total + padded; r += (int)block_size) expert_ids[r / (int)block_size] = (int)e;
        cumsum[e] = total;  // the expert's first row: the scatter's cursor
        total += padded;
    }
    cumsum[experts] = total;
    num_tokens_post_padded[0] = total;
    const unsigned blocks = (capacity + block_size - 1) / block_size;
    for (unsigned b = (unsigned)total / block_size; b < blocks; ++b) expert_ids[b] = 0;
    for (unsigned r = 0; r < capacity; ++r) sorted_token_ids[r] = (int)pairs;
}

extern "C" __global__ void moe_align_scatter(const int* topk_ids, int* sorted_token_ids, int* cumsum, unsigned pairs, unsigned experts)
{
    const unsigned p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    const int e = topk_ids[p];
    if (e < 0 || (unsigned)e >= experts) return;
    sorted_token_ids[atomicAdd(&cumsum[e], 1)] = (int)p;
}
