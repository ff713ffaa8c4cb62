// attention_prefill best-known OpenCL kernel: a work-group of BX query rows (consecutive tokens,
// one head) shares each tile of TK keys and values, staged in local memory as floats once for all
// its rows; the tiles run from the start of the first row's sequence up to the last row (causal tile
// skipping), and each row masks the keys outside [its sequence's start, itself]. Per tile: the
// scores into private memory, one rescale of the running sum and accumulator (online softmax,
// fp32), then the weighted values. Rows of a group may belong to different sequences.
// head_dim <= 128.
// kevo: tune BX 64 32 128
// kevo: tune TK 32 16 64
// kevo: launch attention_prefill block=BX,1
#ifndef BX
#define BX 64
#endif
#ifndef TK
#define TK 32
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
    __local float ks[TK * 128], vs[TK * 128];
    const uint lid = (uint)get_local_id(0), t0 = (uint)get_group_id(0) * BX, h = (uint)get_global_id(1);
    const uint i = t0 + lid;
    if (h >= q_heads) return;  // uniform over the work-group
    const uint kvh = h / (q_heads / kv_heads);
    const bool live = i < tokens;
    const uint start = live ? sequence_start(cu_seqlens, num_seqs, i) : tokens;
    const uint kv_begin = sequence_start(cu_seqlens, num_seqs, t0), kv_end = min(t0 + BX, tokens);
    float qv[128], acc[128], s[TK];
    if (live) {
        __global const ushort* qi = q + ((size_t)i * q_heads + h) * head_dim;
        for (uint e = 0; e < head_dim; ++e) qv[e] = bf16_to_float(qi[e]);
    }
    for (uint e = 0; e < head_dim; ++e) acc[e] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (uint j0 = kv_begin; j0 < kv_end; j0 += TK) {
        barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile is consumed
        for (uint x = lid; x < TK * head_dim; x += BX) {
            const uint j = j0 + x / head_dim, e = x % head_dim;
            const bool in = j < kv_end;
            const size_t at = ((size_t)j * kv_heads + kvh) * head_dim + e;
            ks[x] = in ? bf16_to_float(k[at]) : 0.0f;
            vs[x] = in ? bf16_to_float(v[at]) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // This row's keys in the tile: [lo, hi).
        const uint lo = start > j0 ? start - j0 : 0;
        const uint hi = live && i >= j0 ? min((uint)TK, i - j0 + 1) : 0;
        if (lo >= hi) continue;
        float m_tile = -INFINITY;
        for (uint c = lo; c < hi; ++c) {
            float dot = 0.0f;
            for (uint e = 0; e < head_dim; ++e) dot += qv[e] * ks[c * head_dim + e];
            s[c] = scale * dot;
            m_tile = fmax(m_tile, s[c]);
        }
        const float m_new = fmax(m, m_tile), correction = exp(m - m_new);
        l *= correction;
        for (uint e = 0; e < head_dim; ++e) acc[e] *= correction;
        for (uint c = lo; c < hi; ++c) {
            const float p = exp(s[c] - m_new);
            l += p;
            for (uint e = 0; e < head_dim; ++e) acc[e] += p * vs[c * head_dim + e];
        }
        m = m_new;
    }
    if (!live) return;
    __global ushort* oi = out + ((size_t)i * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) oi[e] = float_to_bf16(acc[e] / l);
}
