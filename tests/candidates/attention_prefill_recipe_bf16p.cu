// attention_prefill_recipe_bf16p: FlashAttention-2/3's numerics (and cuDNN's): keys in tiles of 64,
// per tile the scores in fp32, the running maximum updated once, P = exp(s - m) in fp32 added to the
// normaliser l, then P rounded once to bf16 for the P V product (fp32 accumulation), the output
// divided by l and rounded once. Each p_j is off by up to 2^-8 p_j, the output by up to
// 2^-8 sum_j p_j |v_j|; the task's contract admits it (docs/ml-checks.md). A test kernel: it must pass.
// kevo: tune BX 128 64 256 32
// kevo: launch attention_prefill block=BX,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef BX
#define BX 128
#endif
#define MAX_D 128

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
    float acc[MAX_D];
    const __nv_bfloat162* qi = reinterpret_cast<const __nv_bfloat162*>(q + ((size_t)i * q_heads + h) * head_dim);
#pragma unroll
    for (unsigned e = 0; e < MAX_D; e += 2) {
        acc[e] = acc[e + 1] = 0.0f;
    }
    float m = NEG_INF, l = 0.0f, s[64];
    for (unsigned j0 = start; j0 <= i; j0 += 64) {
        const unsigned n = min(64u, i + 1 - j0);
        float m_new = m;
        for (unsigned jj = 0; jj < n; ++jj) {
            const __nv_bfloat162* kj = reinterpret_cast<const __nv_bfloat162*>(k + ((size_t)(j0 + jj) * kv_heads + kvh) * head_dim);
            float dot = 0.0f;
#pragma unroll
            for (unsigned e = 0; e < MAX_D; e += 2)
                if (e < head_dim) {
                    const float2 a = __bfloat1622float2(qi[e / 2]), b = __bfloat1622float2(kj[e / 2]);
                    dot += a.x * b.x;
                    dot += a.y * b.y;
                }
            s[jj] = scale * dot;
            m_new = fmaxf(m_new, s[jj]);
        }
        const float correction = expf(m - m_new);
        l *= correction;
#pragma unroll
        for (unsigned e = 0; e < MAX_D; ++e) acc[e] *= correction;
        for (unsigned jj = 0; jj < n; ++jj) {
            const float p = expf(s[jj] - m_new);
            l += p;                                                   // the normaliser from the fp32 P
            const float pb = __bfloat162float(__float2bfloat16_rn(p));  // P rounded once to bf16 for P V
            const __nv_bfloat162* vj = reinterpret_cast<const __nv_bfloat162*>(v + ((size_t)(j0 + jj) * kv_heads + kvh) * head_dim);
#pragma unroll
            for (unsigned e = 0; e < MAX_D; e += 2)
                if (e < head_dim) {
                    const float2 b = __bfloat1622float2(vj[e / 2]);
                    acc[e] += pb * b.x;
                    acc[e + 1] += pb * b.y;
                }
        }
        m = m_new;
    }
    __nv_bfloat162* oi = reinterpret_cast<__nv_bfloat162*>(out + ((size_t)i * q_heads + h) * head_dim);
#pragma unroll
    for (unsigned e = 0; e < MAX_D; e += 2)
        if (e < head_dim) oi[e / 2] = __floats2bfloat162_rn(acc[e] / l, acc[e + 1] / l);
}
