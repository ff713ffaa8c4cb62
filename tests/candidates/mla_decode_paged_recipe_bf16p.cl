// mla_decode_paged_recipe_bf16p: the numerics of FlashMLA's decode (and FlashInfer's MLA decode): the
// context split into pieces of SPLIT tokens (split-KV), each taken in tiles of 64 tokens (FlashMLA's
// block_n); per tile the scores in fp32 scaled by softmax_scale * log2(e), the running maximum updated
// once, P = exp2(s - m) in fp32 added to the normaliser l, then P rounded once to bf16 for the P V
// product (fp32 accumulation); each piece ends as (o = acc / l, lse = m + log2 l) in fp32, and the
// pieces are combined by their lse as FlashMLA's combine kernel does, rounded once. The output is off
// by up to 2^-8 sum_j p_j |v_j|; the task's contract admits it. A test kernel: it must pass.
// kevo: tune BX 16 32 64
// kevo: launch mla_decode_paged block=BX,1
#ifndef BX
#define BX 16
#endif

#define D_QK 576
#define D_V 512
#define TILE 64
#define SPLIT 192  // tokens per split: three tiles (contexts of the small sizes reach 1100: up to 6 splits)

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel void mla_decode_paged(__global const ushort* q, __global const ushort* kv_cache, __global const int* block_table, __global const int* cache_seqlens, __global ushort* out, __global float* workspace, __global uint* counters, uint num_seqs, uint num_heads, uint page_size, uint max_pages_per_seq, float softmax_scale)
{
    const uint h = (uint)get_global_id(0), b = (uint)get_global_id(1);
    if (h >= num_heads || b >= num_seqs) return;
    const uint ctx = (uint)cache_seqlens[b];
    const float scale_log2 = softmax_scale * 1.4426950408889634f;
    float qv[D_QK], acc[D_V], comb[D_V], s[TILE];
    __global const ushort* qi = q + ((size_t)b * num_heads + h) * D_QK;
    for (uint e = 0; e < D_QK; ++e) qv[e] = bf16_to_float(qi[e]);
    for (uint e = 0; e < D_V; ++e) comb[e] = 0.0f;
    float lse_max = -INFINITY, comb_sum = 0.0f;  // the combine: sum_i 2^(lse_i - lse_max) (o_i, 1)
    for (uint s0 = 0; s0 < ctx; s0 += SPLIT) {
        const uint s1 = min(ctx, s0 + SPLIT);
        float m = -INFINITY, l = 0.0f;
        for (uint e = 0; e < D_V; ++e) acc[e] = 0.0f;
        for (uint t0 = s0; t0 < s1; t0 += TILE) {
            const uint n = min((uint)TILE, s1 - t0);
            float m_new = m;
            for (uint j = 0; j < n; ++j) {
                const uint t = t0 + j, page = (uint)block_table[(size_t)b * max_pages_per_seq + t / page_size];
                __global const ushort* row = kv_cache + ((size_t)page * page_size + t % page_size) * D_QK;
                float dot = 0.0f;
                for (uint e = 0; e < D_QK; ++e) dot += qv[e] * bf16_to_float(row[e]);
                s[j] = dot * scale_log2;
                m_new = fmax(m_new, s[j]);
            }
            const float correction = exp2(m - m_new);
            l *= correction;
            for (uint e = 0; e < D_V; ++e) acc[e] *= correction;
            for (uint j = 0; j < n; ++j) {
                const uint t = t0 + j, page = (uint)block_table[(size_t)b * max_pages_per_seq + t / page_size];
                __global const ushort* row = kv_cache + ((size_t)page * page_size + t % page_size) * D_QK;
                const float p = exp2(s[j] - m_new);
                l += p;                                           // the normaliser from the fp32 P
                const float pb = bf16_to_float(float_to_bf16(p));  // P rounded once to bf16 for P V
                for (uint e = 0; e < D_V; ++e) acc[e] += pb * bf16_to_float(row[e]);
            }
            m = m_new;
        }
        // The split's partial result (o, lse) in fp32, merged into the running combine.
        const float lse = m + log2(l), inv = 1.0f / l;
        const float new_max = fmax(lse_max, lse), old_w = exp2(lse_max - new_max), w = exp2(lse - new_max);
        comb_sum = comb_sum * old_w + w;
        for (uint e = 0; e < D_V; ++e) comb[e] = comb[e] * old_w + w * (acc[e] * inv);
        lse_max = new_max;
    }
    __global ushort* oi = out + ((size_t)b * num_heads + h) * D_V;
    for (uint e = 0; e < D_V; ++e) oi[e] = float_to_bf16(comb[e] / comb_sum);
}
