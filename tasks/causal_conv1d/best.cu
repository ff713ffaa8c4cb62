// causal_conv1d, faster CUDA: every thread covers 8 channels (one 16-byte load or store per token)
// and, in conv1d_prefill, a run of TOK tokens with the 3-token window kept in registers, so every x
// element is read once (plus 3 tokens of overlap per run). The thread whose run holds a sequence's
// first token reads that sequence's cache line, computes the sequence's first three tokens (past
// the end of its run if need be; the next run skips them) and writes the line: every read and the
// write of a line stay in one thread, as in the seed. Requires dim % 8 == 0.
// kevo: tune TOK 16 8 32 64
// kevo: tune BX 64 32 128
// kevo: launch conv1d_prefill block=BX,1 per_thread=8,TOK
// kevo: launch conv1d_update block=BX,1 per_thread=8,1
#include <cuda_bf16.h>
#ifndef TOK
#define TOK 16
#endif
#ifndef BX
#define BX 64
#endif

__device__ __forceinline__ float lo_f(unsigned u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float hi_f(unsigned u) { return __uint_as_float(u & 0xffff0000u); }
__device__ __forceinline__ void unpack8(uint4 v, float f[8])
{
    f[0] = lo_f(v.x), f[1] = hi_f(v.x), f[2] = lo_f(v.y), f[3] = hi_f(v.y);
    f[4] = lo_f(v.z), f[5] = hi_f(v.z), f[6] = lo_f(v.w), f[7] = hi_f(v.w);
}
__device__ __forceinline__ unsigned pack2(float a, float b)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<unsigned*>(&h);
}
__device__ __forceinline__ uint4 ld(const __nv_bfloat16* p) { return __ldg(reinterpret_cast<const uint4*>(p)); }
__device__ __forceinline__ uint4 ld_rw(const __nv_bfloat16* p) { return *reinterpret_cast<const uint4*>(p); }
__device__ __forceinline__ void st(__nv_bfloat16* p, uint4 v) { *reinterpret_cast<uint4*>(p) = v; }

struct Taps {
    float w[8][4];
    float b[8];
};

__device__ __forceinline__ void load_taps(const __nv_bfloat16* weight, const __nv_bfloat16* bias, unsigned c0, Taps& k)
{
    for (int q = 0; q < 4; ++q) {  // channels 2q, 2q + 1: 8 taps in one 16-byte load
        float f[8];
        unpack8(ld(weight + (size_t)c0 * 4u + 8u * q), f);
        for (int j = 0; j < 4; ++j) k.w[2 * q][j] = f[j], k.w[2 * q + 1][j] = f[4 + j];
    }
    unpack8(ld(bias + c0), k.b);
}

// silu of the taps oldest first plus the bias, 8 channels, packed as bf16.
__device__ __forceinline__ uint4 conv8(const Taps& k, uint4 r3, uint4 r2, uint4 r1, uint4 r0)
{
    float a[8], b[8], c[8], d[8], o[8];
    unpack8(r3, a), unpack8(r2, b), unpack8(r1, c), unpack8(r0, d);
    for (int j = 0; j < 8; ++j) {
        float acc = k.w[j][0] * a[j];
        acc = fmaf(k.w[j][1], b[j], acc);
        acc = fmaf(k.w[j][2], c[j], acc);
        acc = fmaf(k.w[j][3], d[j], acc);
        acc += k.b[j];
        o[j] = acc / (1.0f + __expf(-acc));
    }
    return make_uint4(pack2(o[0], o[1]), pack2(o[2], o[3]), pack2(o[4], o[5]), pack2(o[6], o[7]));
}

extern "C" __global__ void __launch_bounds__(BX) conv1d_prefill(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias, __nv_bfloat16* conv_states, const int* query_start_loc, const int* cache_indices, const int* has_initial_state, __nv_bfloat16* out, unsigned dim, unsigned tokens, unsigned seqs)
{
    const unsigned c0 = (blockIdx.x * blockDim.x + threadIdx.x) * 8u;
    const unsigned t0 = (blockIdx.y * blockDim.y + threadIdx.y) * (unsigned)TOK;
    if (c0 >= dim || t0 >= tokens) return;
    const unsigned t1 = min(t0 + (unsigned)TOK, tokens);
    Taps k;
    load_taps(weight, bias, c0, k);
    unsigned lo = 0, hi = seqs;
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if ((unsigned)__ldg(query_start_loc + mid) <= t0) lo = mid; else hi = mid;
    }
    unsigned s = lo, start = (unsigned)__ldg(query_start_loc + s), end = (unsigned)__ldg(query_start_loc + s + 1);
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
    uint4 r3 = zero, r2 = zero, r1 = zero;
    unsigned t = t0;
    if (t == start) {
        end = t, s -= 1u;  // the loop below begins sequence s at t
    } else {
        if (t < start + 3u) t = min(start + 3u, end);  // tokens 1 and 2 belong to the run holding the start
        if (t < end) {
            r3 = ld(x + (size_t)(t - 3u) * dim + c0);
            r2 = ld(x + (size_t)(t - 2u) * dim + c0);
            r1 = ld(x + (size_t)(t - 1u) * dim + c0);
        }
    }
    while (t < tokens) {
        if (t == end) {
            if (t >= t1) break;  // the next sequence starts in the next run
            s += 1u, start = t, end = (unsigned)__ldg(query_start_loc + s + 1);
            const size_t line = (size_t)__ldg(cache_indices + s) * 3u * dim + c0;
            if (__ldg(has_initial_state + s)) {
                r3 = ld_rw(conv_states + line), r2 = ld_rw(conv_states + line + dim), r1 = ld_rw(conv_states + line + 2u * (size_t)dim);
            } else {
                r3 = zero, r2 = zero, r1 = zero;
            }
            // The line afterwards: the last 3 values of (window before, tokens), oldest first.
            const int n = (int)(end - start);
            const uint4 before[3] = {r3, r2, r1};
            for (int j = 0; j < 3; ++j) {
                const int q = n - 3 + j;
                st(conv_states + line + (size_t)j * dim, q < 0 ? before[3 + q] : ld(x + (size_t)(start + (unsigned)q) * dim + c0));
            }
        } else if (t >= t1 && t >= start + 3u) {
            break;
        }
        const uint4 r0 = ld(x + (size_t)t * dim + c0);
        st(out + (size_t)t * dim + c0, conv8(k, r3, r2, r1, r0));
        r3 = r2, r2 = r1, r1 = r0;
        ++t;
    }
}

extern "C" __global__ void __launch_bounds__(BX) conv1d_update(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias, __nv_bfloat16* conv_state, const int* conv_state_indices, __nv_bfloat16* out, unsigned dim, unsigned batch)
{
    const unsigned c0 = (blockIdx.x * blockDim.x + threadIdx.x) * 8u, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c0 >= dim || r >= batch) return;
    Taps k;
    load_taps(weight, bias, c0, k);
    const size_t line = (size_t)__ldg(conv_state_indices + r) * 3u * dim + c0;
    const uint4 s0 = ld_rw(conv_state + line), s1 = ld_rw(conv_state + line + dim), s2 = ld_rw(conv_state + line + 2u * (size_t)dim);
    const uint4 xv = ld(x + (size_t)r * dim + c0);
    st(out + (size_t)r * dim + c0, conv8(k, s0, s1, s2, xv));
    st(conv_state + line, s1);
    st(conv_state + line + dim, s2);
    st(conv_state + line + 2u * (size_t)dim, xv);
}
