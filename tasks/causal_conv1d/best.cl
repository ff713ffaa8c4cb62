// causal_conv1d, faster OpenCL (the same plan as best.cu): every work-item covers 8 channels (one
// 16-byte load or store per token) and, in conv1d_prefill, a run of TOK tokens with the 3-token
// window kept in registers. The work-item whose run holds a sequence's first token reads that
// sequence's cache line, computes the sequence's first three tokens (past the end of its run if need
// be; the next run skips them) and writes the line: every read and the write of a line stay in one
// work-item. Requires dim % 8 == 0.
// kevo: tune TOK 16 8 32 64
// kevo: tune BX 64 32 128
// kevo: launch conv1d_prefill block=BX,1 per_thread=8,TOK
// kevo: launch conv1d_update block=BX,1 per_thread=8,1
#ifndef TOK
#define TOK 16
#endif
#ifndef BX
#define BX 64
#endif

float8 unpack8(uint4 v)
{
    const uint8 u = (uint8)(v.x << 16, v.x & 0xffff0000u, v.y << 16, v.y & 0xffff0000u,
                            v.z << 16, v.z & 0xffff0000u, v.w << 16, v.w & 0xffff0000u);
    return as_float8(u);
}

uint bf16_bits(float f)  // round to nearest even; NaN stays NaN
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return u >> 16;
}

uint pack2(float a, float b) { return bf16_bits(a) | (bf16_bits(b) << 16); }

uint4 ld(__global const ushort* p) { return vload4(0, (__global const uint*)p); }
void st(__global ushort* p, uint4 v) { vstore4(v, 0, (__global uint*)p); }

// silu of the taps oldest first plus the bias, 8 channels, packed as bf16.
uint4 conv8(const float8 w0, const float8 w1, const float8 w2, const float8 w3, const float8 b,
            uint4 r3, uint4 r2, uint4 r1, uint4 r0)
{
    float8 acc = w0 * unpack8(r3);
    acc = fma(w1, unpack8(r2), acc);
    acc = fma(w2, unpack8(r1), acc);
    acc = fma(w3, unpack8(r0), acc);
    acc += b;
    const float8 o = acc / (1.0f + exp(-acc));
    return (uint4)(pack2(o.s0, o.s1), pack2(o.s2, o.s3), pack2(o.s4, o.s5), pack2(o.s6, o.s7));
}

// The 8 channels' taps (weight is [dim, 4]: 32 values from c0 * 4) as four float8 by tap, and the bias.
void load_taps(__global const ushort* weight, __global const ushort* bias, uint c0, float8* w0, float8* w1, float8* w2,
               float8* w3, float8* b)
{
    float8 q0 = unpack8(ld(weight + (size_t)c0 * 4u)), q1 = unpack8(ld(weight + (size_t)c0 * 4u + 8u));
    float8 q2 = unpack8(ld(weight + (size_t)c0 * 4u + 16u)), q3 = unpack8(ld(weight + (size_t)c0 * 4u + 24u));
    *w0 = (float8)(q0.s0, q0.s4, q1.s0, q1.s4, q2.s0, q2.s4, q3.s0, q3.s4);
    *w1 = (float8)(q0.s1, q0.s5, q1.s1, q1.s5, q2.s1, q2.s5, q3.s1, q3.s5);
    *w2 = (float8)(q0.s2, q0.s6, q1.s2, q1.s6, q2.s2, q2.s6, q3.s2, q3.s6);
    *w3 = (float8)(q0.s3, q0.s7, q1.s3, q1.s7, q2.s3, q2.s7, q3.s3, q3.s7);
    *b = unpack8(ld(bias + c0));
}

__kernel void conv1d_prefill(__global const ushort* x, __global const ushort* weight, __global const ushort* bias, __global ushort* conv_states, __global const int* query_start_loc, __global const int* cache_indices, __global const int* has_initial_state, __global ushort* out, uint dim, uint tokens, uint seqs)
{
    const uint c0 = (uint)get_global_id(0) * 8u, t0 = (uint)get_global_id(1) * (uint)TOK;
    if (c0 >= dim || t0 >= tokens) return;
    const uint t1 = min(t0 + (uint)TOK, tokens);
    float8 w0, w1, w2, w3, b;
    load_taps(weight, bias, c0, &w0, &w1, &w2, &w3, &b);
    uint lo = 0, hi = seqs;
    while (hi - lo > 1) {
        const uint mid = (lo + hi) / 2;
        if ((uint)query_start_loc[mid] <= t0) lo = mid; else hi = mid;
    }
    uint s = lo, start = (uint)query_start_loc[s], end = (uint)query_start_loc[s + 1];
    const uint4 zero = (uint4)(0u);
    uint4 r3 = zero, r2 = zero, r1 = zero;
    uint t = t0;
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
            s += 1u, start = t, end = (uint)query_start_loc[s + 1];
            const size_t line = (size_t)cache_indices[s] * 3u * dim + c0;
            if (has_initial_state[s]) {
                r3 = ld(conv_states + line), r2 = ld(conv_states + line + dim), r1 = ld(conv_states + line + 2u * (size_t)dim);
            } else {
                r3 = zero, r2 = zero, r1 = zero;
            }
            // The line afterwards: the last 3 values of (window before, tokens), oldest first.
            const int n = (int)(end - start);
            const uint4 before[3] = {r3, r2, r1};
            for (int j = 0; j < 3; ++j) {
                const int q = n - 3 + j;
                st(conv_states + line + (size_t)j * dim, q < 0 ? before[3 + q] : ld(x + (size_t)(start + (uint)q) * dim + c0));
            }
        } else if (t >= t1 && t >= start + 3u) {
            break;
        }
        const uint4 r0 = ld(x + (size_t)t * dim + c0);
        st(out + (size_t)t * dim + c0, conv8(w0, w1, w2, w3, b, r3, r2, r1, r0));
        r3 = r2, r2 = r1, r1 = r0;
        ++t;
    }
}

__kernel void conv1d_update(__global const ushort* x, __global const ushort* weight, __global const ushort* bias, __global ushort* conv_state, __global const int* conv_state_indices, __global ushort* out, uint dim, uint batch)
{
    const uint c0 = (uint)get_global_id(0) * 8u, r = (uint)get_global_id(1);
    if (c0 >= dim || r >= batch) return;
    float8 w0, w1, w2, w3, b;
    load_taps(weight, bias, c0, &w0, &w1, &w2, &w3, &b);
    const size_t line = (size_t)conv_state_indices[r] * 3u * dim + c0;
    const uint4 s0 = ld(conv_state + line), s1 = ld(conv_state + line + dim), s2 = ld(conv_state + line + 2u * (size_t)dim);
    const uint4 xv = ld(x + (size_t)r * dim + c0);
    st(out + (size_t)r * dim + c0, conv8(w0, w1, w2, w3, b, s0, s1, s2, xv));
    st(conv_state + line, s1);
    st(conv_state + line + dim, s2);
    st(conv_state + line + 2u * (size_t)dim, xv);
}
