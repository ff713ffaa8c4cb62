// mla_decode_paged seed (naive on purpose): one work-item per (request, head). It walks the request's
// context token by token, finding each token's page in the block table, scores the 576-wide cache row
// (512 latent + 64 rope) against the head's q, keeps an online softmax in fp32 (running maximum,
// rescaled sum and accumulator over the row's first 512 values) and rounds the output once. The
// workspace and counters are not used.
// kevo: tune BX 16 32 64
// kevo: launch mla_decode_paged block=BX,1
#ifndef BX
#define BX 16
#endif

#define D_QK 576  // q . row: 512 latent + 64 rope
#define D_V 512   // the value: the row's latent part

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
    float qv[D_QK], acc[D_V];
    __global const ushort* qi = q + ((size_t)b * num_heads + h) * D_QK;
    for (uint e = 0; e < D_QK; ++e) qv[e] = bf16_to_float(qi[e]);
    for (uint e = 0; e < D_V; ++e) acc[e] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (uint t = 0; t < ctx; ++t) {
        const uint page = (uint)block_table[(size_t)b * max_pages_per_seq + t / page_size];
        __global const ushort* row = kv_cache + ((size_t)page * page_size + t % page_size) * D_QK;
        float dot = 0.0f;
        for (uint e = 0; e < D_QK; ++e) dot += qv[e] * bf16_to_float(row[e]);
        const float s = softmax_scale * dot;
        const float m_new = fmax(m, s);
        const float correction = exp(m - m_new), p = exp(s - m_new);
        l = l * correction + p;
        for (uint e = 0; e < D_V; ++e) acc[e] = acc[e] * correction + p * bf16_to_float(row[e]);
        m = m_new;
    }
    __global ushort* oi = out + ((size_t)b * num_heads + h) * D_V;
    for (uint e = 0; e < D_V; ++e) oi[e] = float_to_bf16(acc[e] / l);
}
