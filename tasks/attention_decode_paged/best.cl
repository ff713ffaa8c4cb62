// attention_decode_paged best-known OpenCL kernel: one work-item per (request, query head), the
// context taken a cache block (16 tokens) at a time: the block table is read once per block, the
// block's 16 scores go to private memory, the running sum and accumulator are rescaled once per
// block (online softmax, fp32), then the block's values are weighted in. Work-items of one group
// are query heads of the same request, so the block table entries and (within a GQA group) the
// keys and values they read are shared through the cache. head_dim <= 128.
// kevo: tune BX 32 64 8
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
    const size_t token_stride = (size_t)kv_heads * head_dim;
    float qv[128], acc[128], s[BLOCK_SIZE];
    __global const ushort* qi = q + ((size_t)b * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) qv[e] = bf16_to_float(qi[e]) * scale, acc[e] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    const uint blocks = (ctx + BLOCK_SIZE - 1) / BLOCK_SIZE;
    for (uint blk = 0; blk < blocks; ++blk) {
        const uint block = (uint)block_tables[(size_t)b * max_blocks_per_seq + blk];
        const size_t base = (size_t)block * BLOCK_SIZE * token_stride + (size_t)kvh * head_dim;
        const uint n = min((uint)BLOCK_SIZE, ctx - blk * BLOCK_SIZE);
        float m_block = -INFINITY;
        for (uint t = 0; t < n; ++t) {
            __global const ushort* kt = k_cache + base + t * token_stride;
            float dot = 0.0f;
            for (uint e = 0; e < head_dim; ++e) dot += qv[e] * bf16_to_float(kt[e]);
            s[t] = dot;
            m_block = fmax(m_block, dot);
        }
        const float m_new = fmax(m, m_block), correction = exp(m - m_new);
        l *= correction;
        for (uint e = 0; e < head_dim; ++e) acc[e] *= correction;
        for (uint t = 0; t < n; ++t) {
            __global const ushort* vt = v_cache + base + t * token_stride;
            const float p = exp(s[t] - m_new);
            l += p;
            for (uint e = 0; e < head_dim; ++e) acc[e] += p * bf16_to_float(vt[e]);
        }
        m = m_new;
    }
    __global ushort* oi = out + ((size_t)b * q_heads + h) * head_dim;
    for (uint e = 0; e < head_dim; ++e) oi[e] = float_to_bf16(acc[e] / l);
}
