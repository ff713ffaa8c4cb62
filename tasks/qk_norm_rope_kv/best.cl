// qk_norm_rope_kv best-known OpenCL kernel: 32 work-items per head of one token (BX / 32 heads a
// work-group), head_dim = 128. Work-item l holds the rotation pairs (2l, 64 + 2l) and (2l + 1, 65 + 2l)
// through vload2 of both halves, so rope needs no exchange; a local-memory tree over each head's 32
// partial sums gives the fp32 sum of squares, and the normed values stay in fp32 into the rotation.
// v heads are copied as bits; a padding token (slot -1) writes only its q.
// kevo: tune BX 64 128 256 32
// kevo: launch qk_norm_rope_kv block=BX,1 per_thread=4,1
#ifndef BX
#define BX 64
#endif
#define HEAD_DIM 128

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

float2 bf16x2_to_float(ushort2 h) { return as_float2(convert_uint2(h) << 16); }
ushort2 float2_to_bf16(float2 f) { return (ushort2)(float_to_bf16(f.s0), float_to_bf16(f.s1)); }

__kernel void qk_norm_rope_kv(__global const ushort* qkv, __global const ushort* q_weight, __global const ushort* k_weight, __global const int* positions, __global const float* cos_sin_cache, __global const int* slot_mapping, __global ushort* q_out, __global ushort* key_cache, __global ushort* value_cache, uint head_dim, uint q_heads, uint kv_heads, uint tokens, float eps)
{
    __local float partial[BX];
    const uint t = (uint)get_group_id(1), lid = (uint)get_local_id(0), lane = lid % 32, base = lid - lane;
    const uint head = (uint)get_group_id(0) * (BX / 32) + lid / 32, heads = q_heads + 2 * kv_heads;
    // Work-items past the last head take part in the barriers.
    const int live = t < tokens && head < heads;
    const int is_q = head < q_heads, is_v = head >= q_heads + kv_heads;
    const int slot = live && !is_q ? slot_mapping[t] : 0;
    __global const ushort* x = qkv + ((size_t)t * heads + head) * HEAD_DIM;
    float2 a = (float2)(0.0f), b = (float2)(0.0f);
    if (live && !is_v) {
        a = bf16x2_to_float(vload2(lane, x));
        b = bf16x2_to_float(vload2(lane, x + HEAD_DIM / 2));
    }
    partial[lid] = a.x * a.x + a.y * a.y + b.x * b.x + b.y * b.y;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 16; s > 0; s >>= 1) {
        if (lane < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (!live || slot < 0) return;  // a padding token's k and v
    const size_t cache_row = (size_t)slot * kv_heads * HEAD_DIM;
    if (is_v) {
        vstore4(vload4(lane, x), lane, value_cache + cache_row + (head - q_heads - kv_heads) * HEAD_DIM);
        return;
    }
    const float inv_rms = rsqrt(partial[base] * (1.0f / HEAD_DIM) + eps);
    __global const ushort* w = is_q ? q_weight : k_weight;
    const float2 n1 = a * inv_rms * bf16x2_to_float(vload2(lane, w));
    const float2 n2 = b * inv_rms * bf16x2_to_float(vload2(lane, w + HEAD_DIM / 2));
    __global const float* cs = cos_sin_cache + (size_t)positions[t] * HEAD_DIM;
    const float2 c = vload2(lane, cs), s = vload2(lane, cs + HEAD_DIM / 2);
    __global ushort* out = is_q ? q_out + ((size_t)t * q_heads + head) * HEAD_DIM
                                : key_cache + cache_row + (head - q_heads) * HEAD_DIM;
    vstore2(float2_to_bf16(n1 * c - n2 * s), lane, out);
    vstore2(float2_to_bf16(n2 * c + n1 * s), lane, out + HEAD_DIM / 2);
}
