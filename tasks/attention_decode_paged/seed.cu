// attention_decode_paged seed (naive on purpose): one thread per (request, query head). It walks
// the request's context token by token, finding each token's physical block in the block table,
// with an online softmax in fp32 (running maximum, rescaled sum and accumulator), and rounds the
// output once. The workspace and counters are not used. head_dim <= 128; the accumulator is a
// register array (loops unrolled to 128 and guarded), not local memory; q is re-read through the
// L1 cache for every token.
// kevo: tune BX 32 64 128
// kevo: launch attention_decode_paged block=BX,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef BX
#define BX 32
#endif
#define MAX_D 128
#define BLOCK_SIZE 16

extern "C" __global__ void attention_decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, const int* block_tables, const int* context_lens, __nv_bfloat16* out, float* workspace, unsigned* counters, unsigned num_seqs, unsigned q_heads, unsigned kv_heads, unsigned head_dim, unsigned max_blocks_per_seq, float scale)
{
    const unsigned h = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y * blockDim.y + threadIdx.y;
    if (h >= q_heads || b >= num_seqs) return;
    const unsigned kvh = h / (q_heads / kv_heads);
    const unsigned ctx = (unsigned)context_lens[b];
    float acc[MAX_D];
    const __nv_bfloat162* qi = reinterpret_cast<const __nv_bfloat162*>(q + ((size_t)b * q_heads + h) * head_dim);
#pragma unroll
    for (unsigned e = 0; e < MAX_D; e += 2) {
        acc[e] = acc[e + 1] = 0.0f;
    }
    float m = NEG_INF, l = 0.0f;
    for (unsigned t = 0; t < ctx; ++t) {
        const unsigned block = (unsigned)block_tables[(size_t)b * max_blocks_per_seq + t / BLOCK_SIZE];
        const size_t at = (((size_t)block * BLOCK_SIZE + t % BLOCK_SIZE) * kv_heads + kvh) * head_dim;
        const __nv_bfloat162* kt = reinterpret_cast<const __nv_bfloat162*>(k_cache + at);
        const __nv_bfloat162* vt = reinterpret_cast<const __nv_bfloat162*>(v_cache + at);
        float dot = 0.0f;
#pragma unroll
        for (unsigned e = 0; e < MAX_D; e += 2)
            if (e < head_dim) {
                const float2 x = __bfloat1622float2(qi[e / 2]), y = __bfloat1622float2(kt[e / 2]);
                dot += x.x * y.x;
                dot += x.y * y.y;
            }
        const float s = scale * dot;
        const float m_new = fmaxf(m, s);
        const float correction = expf(m - m_new), p = expf(s - m_new);
        l = l * correction + p;
#pragma unroll
        for (unsigned e = 0; e < MAX_D; e += 2)
            if (e < head_dim) {
                const float2 y = __bfloat1622float2(vt[e / 2]);
                acc[e] = acc[e] * correction + p * y.x;
                acc[e + 1] = acc[e + 1] * correction + p * y.y;
            }
        m = m_new;
    }
    __nv_bfloat162* oi = reinterpret_cast<__nv_bfloat162*>(out + ((size_t)b * q_heads + h) * head_dim);
#pragma unroll
    for (unsigned e = 0; e < MAX_D; e += 2)
        if (e < head_dim) oi[e / 2] = __floats2bfloat162_rn(acc[e] / l, acc[e + 1] / l);
}
