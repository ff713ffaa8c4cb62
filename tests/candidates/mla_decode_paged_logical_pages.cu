// mla_decode_paged_logical_pages: ignores the block table: logical page n read from physical page n + 1 (page 0
// is never mapped). Otherwise the seed; must be rejected in the nominal trial (the table is shuffled).
// kevo: tune BX 16 32 64
// kevo: launch mla_decode_paged block=BX,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef BX
#define BX 16
#endif
#define D_QK 576  // q . row: 512 latent + 64 rope
#define D_V 512   // the value: the row's latent part

extern "C" __global__ void mla_decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* kv_cache, const int* block_table, const int* cache_seqlens, __nv_bfloat16* out, float* workspace, unsigned* counters, unsigned num_seqs, unsigned num_heads, unsigned page_size, unsigned max_pages_per_seq, float softmax_scale)
{
    const unsigned h = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y * blockDim.y + threadIdx.y;
    if (h >= num_heads || b >= num_seqs) return;
    const unsigned ctx = (unsigned)cache_seqlens[b];
    float acc[D_V];
    const __nv_bfloat162* qi = reinterpret_cast<const __nv_bfloat162*>(q + ((size_t)b * num_heads + h) * D_QK);
    for (unsigned e = 0; e < D_V; ++e) acc[e] = 0.0f;
    float m = NEG_INF, l = 0.0f;
    for (unsigned t = 0; t < ctx; ++t) {
        const unsigned page = t / page_size + 1;  // WRONG: not through the block table
        const __nv_bfloat162* row =
            reinterpret_cast<const __nv_bfloat162*>(kv_cache + ((size_t)page * page_size + t % page_size) * D_QK);
        float dot = 0.0f;
#pragma unroll 8
        for (unsigned e = 0; e < D_QK / 2; ++e) {
            const float2 x = __bfloat1622float2(qi[e]), y = __bfloat1622float2(row[e]);
            dot += x.x * y.x;
            dot += x.y * y.y;
        }
        const float s = softmax_scale * dot;
        const float m_new = fmaxf(m, s);
        const float correction = expf(m - m_new), p = expf(s - m_new);
        l = l * correction + p;
#pragma unroll 8
        for (unsigned e = 0; e < D_V / 2; ++e) {
            const float2 y = __bfloat1622float2(row[e]);
            acc[2 * e] = acc[2 * e] * correction + p * y.x;
            acc[2 * e + 1] = acc[2 * e + 1] * correction + p * y.y;
        }
        m = m_new;
    }
    __nv_bfloat162* oi = reinterpret_cast<__nv_bfloat162*>(out + ((size_t)b * num_heads + h) * D_V);
    for (unsigned e = 0; e < D_V / 2; ++e) oi[e] = __floats2bfloat162_rn(acc[2 * e] / l, acc[2 * e + 1] / l);
}
