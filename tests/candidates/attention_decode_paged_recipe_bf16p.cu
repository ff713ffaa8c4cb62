// attention_decode_paged_recipe_bf16p: the numerics of a tensor-core decode (FlashInfer's
// use_tensor_cores path, FlashAttention's split-KV decode): per cache block of 16 tokens the scores in
// fp32, the running maximum updated once, P = exp(s - m) in fp32 added to the normaliser l, then P
// rounded once to bf16 for the P V product (fp32 accumulation), the output divided by l and rounded
// once. The output is off by up to 2^-8 sum_j p_j |v_j|; the task's contract admits it
// (docs/ml-checks.md). A test kernel: it must pass.
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
    float m = NEG_INF, l = 0.0f, s[BLOCK_SIZE];
    for (unsigned t0 = 0; t0 < ctx; t0 += BLOCK_SIZE) {
        const unsigned n = min((unsigned)BLOCK_SIZE, ctx - t0);
        const unsigned block = (unsigned)block_tables[(size_t)b * max_blocks_per_seq + t0 / BLOCK_SIZE];
        const size_t base = ((size_t)block * BLOCK_SIZE * kv_heads + kvh) * head_dim;
        float m_new = m;
        for (unsigned tt = 0; tt < n; ++tt) {
            const __nv_bfloat162* kt = reinterpret_cast<const __nv_bfloat162*>(k_cache + base + (size_t)tt * kv_heads * head_dim);
            float dot = 0.0f;
#pragma unroll
            for (unsigned e = 0; e < MAX_D; e += 2)
                if (e < head_dim) {
                    const float2 x = __bfloat1622float2(qi[e / 2]), y = __bfloat1622float2(kt[e / 2]);
                    dot += x.x * y.x;
                    dot += x.y * y.y;
                }
            s[tt] = scale * dot;
            m_new = fmaxf(m_new, s[tt]);
        }
        const float correction = expf(m - m_new);
        l *= correction;
#pragma unroll
        for (unsigned e = 0; e < MAX_D; ++e) acc[e] *= correction;
        for (unsigned tt = 0; tt < n; ++tt) {
            const float p = expf(s[tt] - m_new);
            l += p;                                                   // the normaliser from the fp32 P
            const float pb = __bfloat162float(__float2bfloat16_rn(p));  // P rounded once to bf16 for P V
            const __nv_bfloat162* vt = reinterpret_cast<const __nv_bfloat162*>(v_cache + base + (size_t)tt * kv_heads * head_dim);
#pragma unroll
            for (unsigned e = 0; e < MAX_D; e += 2)
                if (e < head_dim) {
                    const float2 y = __bfloat1622float2(vt[e / 2]);
                    acc[e] += pb * y.x;
                    acc[e + 1] += pb * y.y;
                }
        }
        m = m_new;
    }
    __nv_bfloat162* oi = reinterpret_cast<__nv_bfloat162*>(out + ((size_t)b * q_heads + h) * head_dim);
#pragma unroll
    for (unsigned e = 0; e < MAX_D; e += 2)
        if (e < head_dim) oi[e / 2] = __floats2bfloat162_rn(acc[e] / l, acc[e + 1] / l);
}
