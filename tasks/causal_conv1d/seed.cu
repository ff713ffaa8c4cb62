// causal_conv1d seed (naive on purpose): one output element per thread. In conv1d_prefill the thread
// of a sequence's first token also computes the sequence's second and third tokens (their windows
// reach into the cache line too) and then overwrites the line: every read and the write of a line
// stay in one thread.
// kevo: tune BX 256 128 64
// kevo: launch conv1d_prefill block=BX,1
// kevo: launch conv1d_update block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 256
#endif

// The taps oldest first, then the bias, in fp32; silu in fp32; one rounding at the store.
__device__ __nv_bfloat16 conv_silu(const __nv_bfloat16* weight, float b, unsigned c, float x3, float x2, float x1, float x0)
{
    float acc = __bfloat162float(weight[c * 4u + 0u]) * x3;
    acc += __bfloat162float(weight[c * 4u + 1u]) * x2;
    acc += __bfloat162float(weight[c * 4u + 2u]) * x1;
    acc += __bfloat162float(weight[c * 4u + 3u]) * x0;
    acc += b;
    return __float2bfloat16_rn(acc / (1.0f + expf(-acc)));
}

extern "C" __global__ void conv1d_prefill(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias, __nv_bfloat16* conv_states, const int* query_start_loc, const int* cache_indices, const int* has_initial_state, __nv_bfloat16* out, unsigned dim, unsigned tokens, unsigned seqs)
{
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    if (c >= dim || t >= tokens) return;
    // The sequence holding t: the last s with query_start_loc[s] <= t.
    unsigned lo = 0, hi = seqs;
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if ((unsigned)query_start_loc[mid] <= t) lo = mid; else hi = mid;
    }
    const unsigned start = (unsigned)query_start_loc[lo], end = (unsigned)query_start_loc[lo + 1];
    const float b = __bfloat162float(bias[c]);
    if (t >= start + 3u) {
        out[(size_t)t * dim + c] = conv_silu(weight, b, c, __bfloat162float(x[(size_t)(t - 3u) * dim + c]),
                                             __bfloat162float(x[(size_t)(t - 2u) * dim + c]),
                                             __bfloat162float(x[(size_t)(t - 1u) * dim + c]), __bfloat162float(x[(size_t)t * dim + c]));
        return;
    }
    if (t != start) return;  // tokens 1 and 2 of the sequence are the first token's
    // p[0..2]: the window before the sequence (its line, or zeros), then its tokens.
    const size_t line = (size_t)cache_indices[lo] * 3u * dim;
    const int cont = has_initial_state[lo];
    const __nv_bfloat16 zero = __float2bfloat16_rn(0.0f);
    __nv_bfloat16 p[6];
    for (unsigned k = 0; k < 3u; ++k) p[k] = cont ? conv_states[line + (size_t)k * dim + c] : zero;
    const unsigned n = end - start;
    for (unsigned k = 0; k < 3u; ++k) p[3u + k] = k < n ? x[(size_t)(start + k) * dim + c] : zero;
    for (unsigned k = 0; k < 3u && k < n; ++k)
        out[(size_t)(start + k) * dim + c] = conv_silu(weight, b, c, __bfloat162float(p[k]), __bfloat162float(p[k + 1u]),
                                                       __bfloat162float(p[k + 2u]), __bfloat162float(p[k + 3u]));
    // The line afterwards: the last 3 values of (window before, tokens), oldest first.
    for (unsigned k = 0; k < 3u; ++k) {
        const int q = (int)n - 3 + (int)k;  // position among the tokens; < 0: in the window before
        conv_states[line + (size_t)k * dim + c] = q < 0 ? p[3 + q] : x[(size_t)(start + (unsigned)q) * dim + c];
    }
}

extern "C" __global__ void conv1d_update(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias, __nv_bfloat16* conv_state, const int* conv_state_indices, __nv_bfloat16* out, unsigned dim, unsigned batch)
{
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c >= dim || r >= batch) return;
    const size_t line = (size_t)conv_state_indices[r] * 3u * dim;
    const __nv_bfloat16 s0 = conv_state[line + c], s1 = conv_state[line + dim + c], s2 = conv_state[line + 2u * (size_t)dim + c];
    const __nv_bfloat16 xv = x[(size_t)r * dim + c];
    out[(size_t)r * dim + c] = conv_silu(weight, __bfloat162float(bias[c]), c, __bfloat162float(s0), __bfloat162float(s1),
                                         __bfloat162float(s2), __bfloat162float(xv));
    // Shift in the new token: slot 0 is the oldest.
    conv_state[line + c] = s1;
    conv_state[line + dim + c] = s2;
    conv_state[line + 2u * (size_t)dim + c] = xv;
}
