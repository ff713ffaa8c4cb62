// attention_prefill_recipe_bf16p: FlashAttention-2/3's numerics (and cuDNN's): keys in tiles of 64,
// per tile the scores in fp32, the running maximum updated once, P = exp(s - m) in fp32 added to the
// normaliser l, then P rounded once to bf16 for the P V product (fp32 accumulation), the output
// divided by l and rounded once. Each p_j is off by up to 2^-8 p_j, the output by up to
// 2^-8 sum_j p_j |v_j|; the task's contract admits it (docs/ml-checks.md). A test kernel: it must pass.
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
    float m = -INFINITY, l = 0.0f, s[64];
    for (uint j0 = start; j0 <= i; j0 += 64) {
        const uint n = min(64u, i + 1 - j0);
        float m_new = m;
        for (uint jj = 0; jj < n; ++jj) {
            __global const ushort* kj = k + ((size_t)(j0 + jj) * kv_heads + kvh) * head_dim;
            float dot = 0.0f;
            for (uint e = 0; e < head_dim; ++e) dot += qv[e] * bf16_to_float(kj[e]);
            s[jj] = scale * dot;
            m_new = fmax(m_new, s[jj]);
        }
        const float correction = exp(m - m_new);
        l *= correction;
        for (uint e = 0; e < head_dim; ++e) acc[e] *= correction;
        for (uint jj = 0; jj < n; ++jj) {
            const float p = exp(s[jj] - m_new);
            l += p;                                           // the normaliser from the fp32 P
            const float pb = bf16_to_float(float_to_bf16(p));  // P rounded once to bf16 for P V
            __global const ushort* vj = v + ((size_t)(j0 + jj) * kv_heads + kvh) * head_dim;
            for (uint e = 0; e < head_dim; ++e) acc[e] += pb * bf16_to_float(vj[e]);
        }
        m = m_new;
    }
    __global ushort* oi = out + ((size_t)i * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) oi[e] = float_to_bf16(acc[e] / l);
}
