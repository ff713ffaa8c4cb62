// attention_decode_paged_gqa_modulo: query head h reads kv head h % kv_heads instead of h / (q_heads / kv_heads). Otherwise the seed; must be rejected.
// kevo: tune BX 32 64 128
// kevo: launch attention_decode_paged block=BX,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef BX
#define BX 32
#endif

#define BLOCK_SIZE 16

extern "C" __global__ void attention_decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, const int* block_tables, const int* context_lens, __nv_bfloat16* out, float* workspace, unsigned* counters, unsigned num_seqs, unsigned q_heads, unsigned kv_heads, unsigned head_dim, unsigned max_blocks_per_seq, float scale)
{
    const unsigned h = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y * blockDim.y + threadIdx.y;
    if (h >= q_heads || b >= num_seqs) return;
    const unsigned kvh = h % kv_heads;  // WRONG: GQA mapping
    const unsigned ctx = (unsigned)context_lens[b];
    float qv[128], acc[128];
    const __nv_bfloat16* qi = q + ((size_t)b * q_heads + h) * head_dim;
    for (unsigned e = 0; e < head_dim; ++e) qv[e] = __bfloat162float(qi[e]), acc[e] = 0.0f;
    float m = NEG_INF, l = 0.0f;
    for (unsigned t = 0; t < ctx; ++t) {
        const unsigned block = (unsigned)block_tables[(size_t)b * max_blocks_per_seq + t / BLOCK_SIZE];
        const size_t at = (((size_t)block * BLOCK_SIZE + t % BLOCK_SIZE) * kv_heads + kvh) * head_dim;
        float dot = 0.0f;
        for (unsigned e = 0; e < head_dim; ++e) dot += qv[e] * __bfloat162float(k_cache[at + e]);
        const float s = scale * dot;
        const float m_new = fmaxf(m, s);
        const float correction = expf(m - m_new), p = expf(s - m_new);
        l = l * correction + p;
        for (unsigned e = 0; e < head_dim; ++e) acc[e] = acc[e] * correction + p * __bfloat162float(v_cache[at + e]);
        m = m_new;
    }
    __nv_bfloat16* oi = out + ((size_t)b * q_heads + h) * head_dim;
    for (unsigned e = 0; e < head_dim; ++e) oi[e] = __float2bfloat16_rn(acc[e] / l);
}
