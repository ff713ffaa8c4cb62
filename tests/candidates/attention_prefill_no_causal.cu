// attention_prefill_no_causal: no causal mask: every key from the sequence start to the end of the batch. Otherwise the seed; must be rejected.
// kevo: tune BX 128 64 256 32
// kevo: launch attention_prefill block=BX,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef BX
#define BX 128
#endif

// The start of the sequence holding token i: the largest cu_seqlens[b] <= i.
__device__ unsigned sequence_start(const int* cu_seqlens, unsigned num_seqs, unsigned i)
{
    unsigned lo = 0, hi = num_seqs;  // cu_seqlens[lo] <= i < cu_seqlens[hi]
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if ((unsigned)cu_seqlens[mid] <= i) lo = mid;
        else hi = mid;
    }
    return (unsigned)cu_seqlens[lo];
}

extern "C" __global__ void attention_prefill(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const int* cu_seqlens, __nv_bfloat16* out, unsigned tokens, unsigned num_seqs, unsigned q_heads, unsigned kv_heads, unsigned head_dim, float scale)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= tokens || h >= q_heads) return;
    const unsigned kvh = h / (q_heads / kv_heads);
    const unsigned start = sequence_start(cu_seqlens, num_seqs, i);
    float qv[128], acc[128];
    const __nv_bfloat16* qi = q + ((size_t)i * q_heads + h) * head_dim;
    for (unsigned e = 0; e < head_dim; ++e) qv[e] = __bfloat162float(qi[e]), acc[e] = 0.0f;
    float m = NEG_INF, l = 0.0f;
    for (unsigned j = start; j < tokens; ++j) {  // WRONG: no causal mask
        const __nv_bfloat16* kj = k + ((size_t)j * kv_heads + kvh) * head_dim;
        const __nv_bfloat16* vj = v + ((size_t)j * kv_heads + kvh) * head_dim;
        float dot = 0.0f;
        for (unsigned e = 0; e < head_dim; ++e) dot += qv[e] * __bfloat162float(kj[e]);
        const float s = scale * dot;
        const float m_new = fmaxf(m, s);
        const float correction = expf(m - m_new), p = expf(s - m_new);
        l = l * correction + p;
        for (unsigned e = 0; e < head_dim; ++e) acc[e] = acc[e] * correction + p * __bfloat162float(vj[e]);
        m = m_new;
    }
    __nv_bfloat16* oi = out + ((size_t)i * q_heads + h) * head_dim;
    for (unsigned e = 0; e < head_dim; ++e) oi[e] = __float2bfloat16_rn(acc[e] / l);
}
