// mla_decode_paged_recipe_bf16p: the numerics of FlashMLA's decode (and FlashInfer's MLA decode): the
// context split into pieces of SPLIT tokens (split-KV), each taken in tiles of 64 tokens (FlashMLA's
// block_n); per tile the scores in fp32 scaled by softmax_scale * log2(e), the running maximum updated
// once, P = exp2(s - m) in fp32 added to the normaliser l, then P rounded once to bf16 for the P V
// product (fp32 accumulation); each piece ends as (o = acc / l, lse = m + log2 l) in fp32, and the
// pieces are combined by their lse as FlashMLA's combine kernel does, rounded once. The output is off
// by up to 2^-8 sum_j p_j |v_j|; the task's contract admits it. A test kernel: it must pass.
// kevo: tune BX 16 32 64
// kevo: launch mla_decode_paged block=BX,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef BX
#define BX 16
#endif

#define D_QK 576
#define D_V 512
#define TILE 64
#define SPLIT 192  // tokens per split: three tiles

__device__ __forceinline__ float bf16_to_float(__nv_bfloat16 h) { return __bfloat162float(h); }

extern "C" __global__ void mla_decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* kv_cache, const int* block_table, const int* cache_seqlens, __nv_bfloat16* out, float* workspace, unsigned* counters, unsigned num_seqs, unsigned num_heads, unsigned page_size, unsigned max_pages_per_seq, float softmax_scale)
{
    const unsigned h = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y * blockDim.y + threadIdx.y;
    if (h >= num_heads || b >= num_seqs) return;
    const unsigned ctx = (unsigned)cache_seqlens[b];
    const float scale_log2 = softmax_scale * 1.4426950408889634f;
    float acc[D_V], comb[D_V], s[TILE];
    const __nv_bfloat16* qi = q + ((size_t)b * num_heads + h) * D_QK;
    for (unsigned e = 0; e < D_V; ++e) comb[e] = 0.0f;
    float lse_max = NEG_INF, comb_sum = 0.0f;  // the combine: sum_i 2^(lse_i - lse_max) (o_i, 1)
    for (unsigned s0 = 0; s0 < ctx; s0 += SPLIT) {
        const unsigned s1 = min(ctx, s0 + SPLIT);
        float m = NEG_INF, l = 0.0f;
        for (unsigned e = 0; e < D_V; ++e) acc[e] = 0.0f;
        for (unsigned t0 = s0; t0 < s1; t0 += TILE) {
            const unsigned n = min((unsigned)TILE, s1 - t0);
            float m_new = m;
            for (unsigned j = 0; j < n; ++j) {
                const unsigned t = t0 + j, page = (unsigned)block_table[(size_t)b * max_pages_per_seq + t / page_size];
                const __nv_bfloat16* row = kv_cache + ((size_t)page * page_size + t % page_size) * D_QK;
                float dot = 0.0f;
                for (unsigned e = 0; e < D_QK; ++e) dot += bf16_to_float(qi[e]) * bf16_to_float(row[e]);
                s[j] = dot * scale_log2;
                m_new = fmaxf(m_new, s[j]);
            }
            const float correction = exp2f(m - m_new);
            l *= correction;
            for (unsigned e = 0; e < D_V; ++e) acc[e] *= correction;
            for (unsigned j = 0; j < n; ++j) {
                const unsigned t = t0 + j, page = (unsigned)block_table[(size_t)b * max_pages_per_seq + t / page_size];
                const __nv_bfloat16* row = kv_cache + ((size_t)page * page_size + t % page_size) * D_QK;
                const float p = exp2f(s[j] - m_new);
                l += p;                                                   // the normaliser from the fp32 P
                const float pb = __bfloat162float(__float2bfloat16_rn(p));  // P rounded once to bf16 for P V
                for (unsigned e = 0; e < D_V; ++e) acc[e] += pb * bf16_to_float(row[e]);
            }
            m = m_new;
        }
        // The split's partial result (o, lse) in fp32, merged into the running combine.
        const float lse = m + log2f(l), inv = 1.0f / l;
        const float new_max = fmaxf(lse_max, lse), old_w = exp2f(lse_max - new_max), w = exp2f(lse - new_max);
        comb_sum = comb_sum * old_w + w;
        for (unsigned e = 0; e < D_V; ++e) comb[e] = comb[e] * old_w + w * (acc[e] * inv);
        lse_max = new_max;
    }
    __nv_bfloat16* oi = out + ((size_t)b * num_heads + h) * D_V;
    for (unsigned e = 0; e < D_V; ++e) oi[e] = __float2bfloat16_rn(comb[e] / comb_sum);
}
