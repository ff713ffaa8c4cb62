// attention_prefill_only_negative_logits: right where a row has a logit above about -80, wrong where
// every logit is very negative: its running maximum starts at 0, not -inf, so exp(s - 0) underflows to
// 0 for every key and 0 / 0 is NaN. The outlier trial's query head 0 has logits of about
// -scale x 1600 in every size; this kernel must fail there.
// kevo: tune BX 128 64 256 32
// kevo: launch attention_prefill block=BX,1
#ifndef BX
#define BX 128
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

// The start of the sequence holding token i: the largest cu_seqlens[b] <= i.
uint sequence_start(__global const int* cu_seqlens, uint num_seqs, uint i)
{
    uint lo = 0, hi = num_seqs;  // cu_seqlens[lo] <= i < cu_seqlens[hi]
    while (hi - lo > 1) {
        const uint mid = (lo + hi) / 2;
        if ((uint)cu_seqlens[mid] <= i) lo = mid;
        else hi = mid;
    }
    return (uint)cu_seqlens[lo];
}

__kernel void attention_prefill(__global const ushort* q, __global const ushort* k, __global const ushort* v, __global const int* cu_seqlens, __global ushort* out, uint tokens, uint num_seqs, uint q_heads, uint kv_heads, uint head_dim, float scale)
{
    const uint i = (uint)get_global_id(0), h = (uint)get_global_id(1);
    if (i >= tokens || h >= q_heads) return;
    const uint kvh = h / (q_heads / kv_heads);
    const uint start = sequence_start(cu_seqlens, num_seqs, i);
    float qv[128], acc[128];
    __global const ushort* qi = q + ((size_t)i * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) qv[e] = bf16_to_float(qi[e]), acc[e] = 0.0f;
    float m = 0.0f, l = 0.0f;  // WRONG (only for rows whose logits are all very negative): max starts at 0
    for (uint j = start; j <= i; ++j) {
        __global const ushort* kj = k + ((size_t)j * kv_heads + kvh) * head_dim;
        __global const ushort* vj = v + ((size_t)j * kv_heads + kvh) * head_dim;
        float dot = 0.0f;
        for (uint e = 0; e < head_dim; ++e) dot += qv[e] * bf16_to_float(kj[e]);
        const float s = scale * dot;
        const float m_new = fmax(m, s);
        const float correction = exp(m - m_new), p = exp(s - m_new);
        l = l * correction + p;
        for (uint e = 0; e < head_dim; ++e) acc[e] = acc[e] * correction + p * bf16_to_float(vj[e]);
        m = m_new;
    }
    __global ushort* oi = out + ((size_t)i * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) oi[e] = float_to_bf16(acc[e] / l);
}
