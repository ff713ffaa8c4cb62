// attention_decode_paged_recipe_bf16p: the numerics of a tensor-core decode (FlashInfer's
// use_tensor_cores path, FlashAttention's split-KV decode): per cache block of 16 tokens the scores in
// fp32, the running maximum updated once, P = exp(s - m) in fp32 added to the normaliser l, then P
// rounded once to bf16 for the P V product (fp32 accumulation), the output divided by l and rounded
// once. The output is off by up to 2^-8 sum_j p_j |v_j|; the task's contract admits it
// (docs/ml-checks.md). A test kernel: it must pass.
// kevo: tune BX 32 64 128
// kevo: launch attention_decode_paged block=BX,1
#ifndef BX
#define BX 32
#endif

#define BLOCK_SIZE 16

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel void attention_decode_paged(__global const ushort* q, __global const ushort* k_cache, __global const ushort* v_cache, __global const int* block_tables, __global const int* context_lens, __global ushort* out, __global float* workspace, __global uint* counters, uint num_seqs, uint q_heads, uint kv_heads, uint head_dim, uint max_blocks_per_seq, float scale)
{
    const uint h = (uint)get_global_id(0), b = (uint)get_global_id(1);
    if (h >= q_heads || b >= num_seqs) return;
    const uint kvh = h / (q_heads / kv_heads);
    const uint ctx = (uint)context_lens[b];
    float qv[128], acc[128];
    __global const ushort* qi = q + ((size_t)b * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) qv[e] = bf16_to_float(qi[e]), acc[e] = 0.0f;
    float m = -INFINITY, l = 0.0f, s[BLOCK_SIZE];
    for (uint t0 = 0; t0 < ctx; t0 += BLOCK_SIZE) {
        const uint n = min((uint)BLOCK_SIZE, ctx - t0);
        const uint block = (uint)block_tables[(size_t)b * max_blocks_per_seq + t0 / BLOCK_SIZE];
        const size_t base = ((size_t)block * BLOCK_SIZE * kv_heads + kvh) * head_dim;
        float m_new = m;
        for (uint tt = 0; tt < n; ++tt) {
            const size_t at = base + (size_t)tt * kv_heads * head_dim;
            float dot = 0.0f;
            for (uint e = 0; e < head_dim; ++e) dot += qv[e] * bf16_to_float(k_cache[at + e]);
            s[tt] = scale * dot;
            m_new = fmax(m_new, s[tt]);
        }
        const float correction = exp(m - m_new);
        l *= correction;
        for (uint e = 0; e < head_dim; ++e) acc[e] *= correction;
        for (uint tt = 0; tt < n; ++tt) {
            const float p = exp(s[tt] - m_new);
            l += p;                                           // the normaliser from the fp32 P
            const float pb = bf16_to_float(float_to_bf16(p));  // P rounded once to bf16 for P V
            const size_t at = base + (size_t)tt * kv_heads * head_dim;
            for (uint e = 0; e < head_dim; ++e) acc[e] += pb * bf16_to_float(v_cache[at + e]);
        }
        m = m_new;
    }
    __global ushort* oi = out + ((size_t)b * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) oi[e] = float_to_bf16(acc[e] / l);
}
