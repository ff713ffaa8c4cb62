// qk_norm_rope_kv_only_max_position: right everywhere but at the last position of the cache (2047 at
// every small size, max(2048, 2T) rows), which it reads one row short. The outlier trial puts token
// 0 at the last position in every size; this kernel must fail there.
// kevo: tune BX 128 256 512
// kevo: launch qk_norm_rope_kv block=BX,1
#ifndef BX
#define BX 128
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

__kernel void qk_norm_rope_kv(__global const ushort* qkv, __global const ushort* q_weight, __global const ushort* k_weight, __global const int* positions, __global const float* cos_sin_cache, __global const int* slot_mapping, __global ushort* q_out, __global ushort* key_cache, __global ushort* value_cache, uint head_dim, uint q_heads, uint kv_heads, uint tokens, float eps)
{
    __local float partial[BX];  // BX is a multiple of head_dim, a power of two: groups hold whole heads
    __local float normed[BX];
    const uint e = (uint)get_global_id(0), t = (uint)get_global_id(1), lid = (uint)get_local_id(0);
    const uint heads = q_heads + 2 * kv_heads, half_dim = head_dim / 2;
    const uint head = e / head_dim, j = e % head_dim, base = lid - j;  // base: the head's first work-item
    // Out-of-range work-items take part in the barriers with x = 0.
    const int live = t < tokens && head < heads;
    const float x = live ? bf16_to_float(qkv[(size_t)t * heads * head_dim + e]) : 0.0f;
    partial[lid] = x * x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = half_dim; s > 0; s >>= 1) {
        if (j < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv_rms = rsqrt(partial[base] / (float)head_dim + eps);
    const int is_q = head < q_heads, is_k = !is_q && head < q_heads + kv_heads;
    float n = x;
    if (is_q) n = x * inv_rms * bf16_to_float(q_weight[j]);
    if (is_k) n = x * inv_rms * bf16_to_float(k_weight[j]);
    normed[lid] = n;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!live) return;
    const int slot = slot_mapping[t];
    if (!is_q && slot < 0) return;  // a padding token: no cache write
    const size_t cache_row = (size_t)slot * kv_heads * head_dim;
    if (!is_q && !is_k) {  // v: copied as bits
        value_cache[cache_row + (head - q_heads - kv_heads) * head_dim + j] = qkv[(size_t)t * heads * head_dim + e];
        return;
    }
    // WRONG (only at the cache's last row, position 2047 at every small size): one row short of the end.
    __global const float* cs = cos_sin_cache + (size_t)min(positions[t], 2046) * head_dim;
    const uint i = j % half_dim;
    const float c = cs[i], s = cs[half_dim + i];
    const float partner = normed[base + (j < half_dim ? j + half_dim : j - half_dim)];
    // first half: x1 c - x2 s; second half: x2 c + x1 s (n is this element, partner the other).
    const ushort out = float_to_bf16(j < half_dim ? n * c - partner * s : n * c + partner * s);
    if (is_q) q_out[((size_t)t * q_heads + head) * head_dim + j] = out;
    else key_cache[cache_row + (head - q_heads) * head_dim + j] = out;
}
