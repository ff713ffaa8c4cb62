// attention_decode_paged_only_negative_logits: right where a row has a logit above about -80, wrong
// where every logit is very negative: its running maximum starts at 0, not -inf, so exp(s - 0)
// underflows for every token and 0 / 0 is NaN. The outlier trial's query head 0 has logits of about
// -scale x 1600 in every size; this kernel must fail there.
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
    float m = 0.0f, l = 0.0f;  // WRONG (only for rows whose logits are all very negative): max starts at 0
    for (uint t = 0; t < ctx; ++t) {
        const uint block = (uint)block_tables[(size_t)b * max_blocks_per_seq + t / BLOCK_SIZE];
        const size_t at = (((size_t)block * BLOCK_SIZE + t % BLOCK_SIZE) * kv_heads + kvh) * head_dim;
        float dot = 0.0f;
        for (uint e = 0; e < head_dim; ++e) dot += qv[e] * bf16_to_float(k_cache[at + e]);
        const float s = scale * dot;
        const float m_new = fmax(m, s);
        const float correction = exp(m - m_new), p = exp(s - m_new);
        l = l * correction + p;
        for (uint e = 0; e < head_dim; ++e) acc[e] = acc[e] * correction + p * bf16_to_float(v_cache[at + e]);
        m = m_new;
    }
    __global ushort* oi = out + ((size_t)b * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) oi[e] = float_to_bf16(acc[e] / l);
}
