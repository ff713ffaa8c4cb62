// causal_conv1d, wrong (a test candidate): conv1d_update computes the output but leaves the conv
// state as it was. Rejected in the nominal trial of the first decode size.
// kevo: tune BX 256 128 64
// kevo: launch conv1d_prefill block=BX,1
// kevo: launch conv1d_update block=BX,1
#ifndef BX
#define BX 256
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

// The taps oldest first, then the bias, in fp32; silu in fp32; one rounding at the store.
ushort conv_silu(__global const ushort* weight, float b, uint c, float x3, float x2, float x1, float x0)
{
    float acc = bf16_to_float(weight[c * 4u + 0u]) * x3;
    acc += bf16_to_float(weight[c * 4u + 1u]) * x2;
    acc += bf16_to_float(weight[c * 4u + 2u]) * x1;
    acc += bf16_to_float(weight[c * 4u + 3u]) * x0;
    acc += b;
    return float_to_bf16(acc / (1.0f + exp(-acc)));
}

__kernel void conv1d_prefill(__global const ushort* x, __global const ushort* weight, __global const ushort* bias, __global ushort* conv_states, __global const int* query_start_loc, __global const int* cache_indices, __global const int* has_initial_state, __global ushort* out, uint dim, uint tokens, uint seqs)
{
    const uint c = (uint)get_global_id(0), t = (uint)get_global_id(1);
    if (c >= dim || t >= tokens) return;
    // The sequence holding t: the last s with query_start_loc[s] <= t.
    uint lo = 0, hi = seqs;
    while (hi - lo > 1) {
        const uint mid = (lo + hi) / 2;
        if ((uint)query_start_loc[mid] <= t) lo = mid; else hi = mid;
    }
    const uint start = (uint)query_start_loc[lo], end = (uint)query_start_loc[lo + 1];
    const float b = bf16_to_float(bias[c]);
    if (t >= start + 3u) {
        out[(size_t)t * dim + c] = conv_silu(weight, b, c, bf16_to_float(x[(size_t)(t - 3u) * dim + c]),
                                             bf16_to_float(x[(size_t)(t - 2u) * dim + c]),
                                             bf16_to_float(x[(size_t)(t - 1u) * dim + c]), bf16_to_float(x[(size_t)t * dim + c]));
        return;
    }
    if (t != start) return;  // tokens 1 and 2 of the sequence are the first token's
    // p[0..2]: the window before the sequence (its line, or zeros), then its tokens.
    const size_t line = (size_t)cache_indices[lo] * 3u * dim;
    const int cont = has_initial_state[lo];
    ushort p[6];
    for (uint k = 0; k < 3u; ++k) p[k] = cont ? conv_states[line + (size_t)k * dim + c] : (ushort)0;
    const uint n = end - start;
    for (uint k = 0; k < 3u; ++k) p[3u + k] = k < n ? x[(size_t)(start + k) * dim + c] : (ushort)0;
    for (uint k = 0; k < 3u && k < n; ++k)
        out[(size_t)(start + k) * dim + c] = conv_silu(weight, b, c, bf16_to_float(p[k]), bf16_to_float(p[k + 1u]),
                                                       bf16_to_float(p[k + 2u]), bf16_to_float(p[k + 3u]));
    // The line afterwards: the last 3 values of (window before, tokens), oldest first.
    for (uint k = 0; k < 3u; ++k) {
        const int q = (int)n - 3 + (int)k;  // position among the tokens; < 0: in the window before
        conv_states[line + (size_t)k * dim + c] = q < 0 ? p[3 + q] : x[(size_t)(start + (uint)q) * dim + c];
    }
}

__kernel void conv1d_update(__global const ushort* x, __global const ushort* weight, __global const ushort* bias, __global ushort* conv_state, __global const int* conv_state_indices, __global ushort* out, uint dim, uint batch)
{
    const uint c = (uint)get_global_id(0), r = (uint)get_global_id(1);
    if (c >= dim || r >= batch) return;
    const size_t line = (size_t)conv_state_indices[r] * 3u * dim;
    const ushort s0 = conv_state[line + c], s1 = conv_state[line + dim + c], s2 = conv_state[line + 2u * (size_t)dim + c];
    const ushort xv = x[(size_t)r * dim + c];
    out[(size_t)r * dim + c] = conv_silu(weight, bf16_to_float(bias[c]), c, bf16_to_float(s0), bf16_to_float(s1),
                                         bf16_to_float(s2), bf16_to_float(xv));
}
