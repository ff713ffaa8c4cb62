// mla_decode_paged best-known OpenCL kernel: split-KV with an in-kernel combine, one work-group of 256
// work-items per (request, group of 16 heads, partition of 512 tokens), a persistent grid striding over
// those items (partitions fastest; items past a request's last partition are skipped).
// - Every cache row is shared by all heads (MLA's one latent kv head): a tile of 16 tokens (16 x 576
//   bf16, each token's page from the block table) is loaded once into local memory for the group's
//   16 heads, whose q (16 x 576 bf16) stays there for the whole partition.
// - Scores: work-item (head i / 16, token i % 16) takes one 576-wide dot product. Online softmax in
//   fp32 once per tile: each of a head's 16 work-items reads the head's 16 scores and computes the
//   same tile maximum, probabilities and running sum; the rescale factor goes to local memory.
// - P V: work-item i owns 8 latent dims (i % 64) of 4 heads (i / 64 + 4k): 32 fp32 accumulators,
//   rescaled once per tile, then 16 tokens x 32 FMAs from the tile in local memory.
// - A request of one partition writes out directly; otherwise each partition writes (m, l, acc[512])
//   per head to the workspace, fences, and bumps the counter of (request, the group's first head); the
//   work-group that arrives last merges the partitions (rescaled by exp(m_p - M)), writes out and sets
//   the counter back to 0.
// Any number of heads (a last group of fewer than 16 computes on zeros and stores nothing for them).
// kevo: tune GRID 264 132 528
// kevo: launch mla_decode_paged block=256,1 grid=GRID,1
#ifndef GRID
#define GRID 264
#endif

#define D_QK 576
#define D_V 512
#define HG 16             // heads per work-group
#define TILE 16           // tokens per tile
#define KSTRIDE 584       // a tile row in local memory: 576 + 8 (16-byte rows, staggered banks)
#define PART_TOKENS 512   // tokens per partition (the workspace has a record per 512 tokens)
#define CHUNKS (D_QK / 8) // 72 chunks of 8 bf16 per row

float8 bf16x8_to_float(ushort8 v) { return as_float8(convert_uint8(v) << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void mla_decode_paged(__global const ushort* q, __global const ushort* kv_cache, __global const int* block_table, __global const int* cache_seqlens, __global ushort* out, __global float* workspace, __global uint* counters, uint num_seqs, uint num_heads, uint page_size, uint max_pages_per_seq, float softmax_scale)
{
    __local ushort q_s[HG * D_QK];
    __local ushort k_s[TILE * KSTRIDE];
    __local float s_s[HG * TILE], p_s[HG * TILE], alpha_s[HG], l_s[HG];
    __local uint last_s;

    const uint tid = (uint)get_local_id(0);
    const uint groups = (num_heads + HG - 1) / HG;
    const uint max_parts = (max_pages_per_seq * page_size + PART_TOKENS - 1) / PART_TOKENS;
    const uint items = num_seqs * groups * max_parts;
    const uint sh = tid / TILE, sj = tid % TILE;          // score phase: head, token
    const uint vd = (tid % 64) * 8, vh = tid / 64;        // P V phase: dims vd..vd+7 of heads vh + 4k

    for (uint item = (uint)get_group_id(0); item < items; item += (uint)get_num_groups(0)) {
        const uint p = item % max_parts, g = item / max_parts % groups, b = item / (max_parts * groups);
        const uint ctx = (uint)cache_seqlens[b];
        const uint parts = (ctx + PART_TOKENS - 1) / PART_TOKENS;
        if (p >= parts) continue;  // uniform over the work-group
        const uint h0 = g * HG, t_begin = p * PART_TOKENS, t_end = min(ctx, t_begin + PART_TOKENS);
        __global const int* table = block_table + (size_t)b * max_pages_per_seq;

        // q of the group's heads (zeros for heads past num_heads).
        for (uint i = tid; i < HG * CHUNKS; i += 256) {
            const uint hh = i / CHUNKS, c = i % CHUNKS;
            ushort8 v = (ushort8)(0);
            if (h0 + hh < num_heads) v = vload8(c, q + ((size_t)b * num_heads + h0 + hh) * D_QK);
            vstore8(v, 0, q_s + hh * D_QK + c * 8);
        }
        float m_run = -INFINITY, l_run = 0.0f;  // of head sh (the same in its 16 work-items)
        float acc[4][8];
        for (int k = 0; k < 4; ++k)
            for (int e = 0; e < 8; ++e) acc[k][e] = 0.0f;

        for (uint t0 = t_begin; t0 < t_end; t0 += TILE) {
            const uint n = min((uint)TILE, t_end - t0);
            barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile's P V is done with k_s (and q_s is written)
            for (uint i = tid; i < n * CHUNKS; i += 256) {
                const uint j = i / CHUNKS, c = i % CHUNKS, t = t0 + j;
                const uint page = (uint)table[t / page_size];
                __global const ushort* row = kv_cache + ((size_t)page * page_size + t % page_size) * D_QK;
                vstore8(vload8(c, row), 0, k_s + j * KSTRIDE + c * 8);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            float dot = -INFINITY;
            if (sj < n) {
                float8 sum = (float8)(0.0f);
                for (uint c = 0; c < CHUNKS; ++c)
                    sum += bf16x8_to_float(vload8(0, q_s + sh * D_QK + c * 8)) * bf16x8_to_float(vload8(0, k_s + sj * KSTRIDE + c * 8));
                dot = softmax_scale * (((sum.s0 + sum.s1) + (sum.s2 + sum.s3)) + ((sum.s4 + sum.s5) + (sum.s6 + sum.s7)));
            }
            s_s[sh * TILE + sj] = dot;
            barrier(CLK_LOCAL_MEM_FENCE);
            float m_tile = -INFINITY;
            for (uint j = 0; j < n; ++j) m_tile = fmax(m_tile, s_s[sh * TILE + j]);
            const float m_new = fmax(m_run, m_tile);  // finite: the tile's first token is in the context
            const float alpha = exp(m_run - m_new);
            float l_tile = 0.0f;
            for (uint j = 0; j < n; ++j) l_tile += exp(s_s[sh * TILE + j] - m_new);
            l_run = l_run * alpha + l_tile;
            m_run = m_new;
            p_s[sh * TILE + sj] = sj < n ? exp(dot - m_new) : 0.0f;
            if (sj == 0) alpha_s[sh] = alpha;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (int k = 0; k < 4; ++k) {
                const float a = alpha_s[vh + 4 * k];
                for (int e = 0; e < 8; ++e) acc[k][e] *= a;
            }
            for (uint j = 0; j < n; ++j) {
                const float8 v = bf16x8_to_float(vload8(0, k_s + j * KSTRIDE + vd));
                for (int k = 0; k < 4; ++k) {
                    const float pw = p_s[(vh + 4 * k) * TILE + j];
                    acc[k][0] += pw * v.s0; acc[k][1] += pw * v.s1; acc[k][2] += pw * v.s2; acc[k][3] += pw * v.s3;
                    acc[k][4] += pw * v.s4; acc[k][5] += pw * v.s5; acc[k][6] += pw * v.s6; acc[k][7] += pw * v.s7;
                }
            }
        }
        if (sj == 0) l_s[sh] = l_run;
        barrier(CLK_LOCAL_MEM_FENCE);

        if (parts == 1) {
            for (int k = 0; k < 4; ++k) {
                const uint hh = vh + 4 * k;
                if (h0 + hh >= num_heads) continue;
                const float inv = 1.0f / l_s[hh];
                __global ushort* o = out + ((size_t)b * num_heads + h0 + hh) * D_V + vd;
                for (int e = 0; e < 8; ++e) o[e] = float_to_bf16(acc[k][e] * inv);
            }
            continue;
        }
        // This partition's record per head: (m, l, acc[512]).
        if (sj == 0 && h0 + sh < num_heads) {
            __global float* r = workspace + (((size_t)b * num_heads + h0 + sh) * max_parts + p) * (D_V + 2);
            r[0] = m_run, r[1] = l_run;
        }
        for (int k = 0; k < 4; ++k) {
            const uint hh = vh + 4 * k;
            if (h0 + hh >= num_heads) continue;
            __global float* r = workspace + (((size_t)b * num_heads + h0 + hh) * max_parts + p) * (D_V + 2) + 2 + vd;
            for (int e = 0; e < 8; ++e) r[e] = acc[k][e];
        }
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        __global uint* counter = counters + (size_t)b * num_heads + h0;
        if (tid == 0) last_s = atomic_inc(counter) == parts - 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!last_s) continue;
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        // The last partition to arrive merges them all (volatile reads: the other work-groups' writes).
        for (int k = 0; k < 4; ++k) {
            const uint hh = vh + 4 * k;
            if (h0 + hh >= num_heads) continue;
            volatile __global const float* rec = workspace + ((size_t)b * num_heads + h0 + hh) * max_parts * (D_V + 2);
            float big_m = -INFINITY;
            for (uint pp = 0; pp < parts; ++pp) big_m = fmax(big_m, rec[pp * (D_V + 2)]);
            float big_l = 0.0f, sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (uint pp = 0; pp < parts; ++pp) {
                volatile __global const float* r = rec + pp * (D_V + 2);
                const float w = exp(r[0] - big_m);
                big_l += w * r[1];
                for (int e = 0; e < 8; ++e) sum[e] += w * r[2 + vd + e];
            }
            const float inv = 1.0f / big_l;
            __global ushort* o = out + ((size_t)b * num_heads + h0 + hh) * D_V + vd;
            for (int e = 0; e < 8; ++e) o[e] = float_to_bf16(sum[e] * inv);
        }
        if (tid == 0) *counter = 0;  // ready for the next launch
    }
}
