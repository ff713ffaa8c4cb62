// attention_decode_paged best-known CUDA kernel: split-context (flash-decoding) with an in-kernel
// combine.
// - Work item = (request, kv head, partition of 512 tokens = 32 cache blocks), one warp each; a
//   persistent grid (grid=, default 2 blocks per SM of an H200, all resident) of 4-warp blocks
//   strides over the items, partitions fastest, so even one long request spreads over many SMs.
//   Items past a request's last partition exit at once.
// - One warp serves all G = Hq / Hkv query heads of its kv head: each key and value is read once
//   for the group. A key row of d bf16 is d / 8 lanes x 16 bytes (uint4 loads, __ldg); a warp
//   step covers 32 / (d / 8) keys, 8 tokens of a block per chunk (4 when G = 8) with all their loads
//   issued first.
// - Scores: each lane's 8-element dot per head, summed over the key's lanes by xor shuffles; q is
//   pre-scaled by scale * log2 e so that exp2 gives the softmax. Online softmax per chunk in fp32:
//   the chunk maximum over the warp, one rescale of the running sum and accumulator.
// - End of a partition: the key groups' partial sums are added by shuffles. A request of one
//   partition writes out directly; otherwise each partition writes (m, l, acc) to the workspace,
//   fences, and bumps the (request, kv head) counter; the warp that arrives last merges the
//   partitions (rescaled by exp2(m_p - M)), writes out and sets the counter back to 0.
// Groups of 8 heads and of up to 4 (G = 4 registers held, the heads past the group computed on zeros
// and never stored: two instantiations keep NVRTC's time low); head_dim 64 or 128 (at run time);
// buffers 16-byte aligned.
// kevo: tune GRID 264 132 396 528
// kevo: launch attention_decode_paged block=128,1 grid=GRID,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef GRID
#define GRID 264
#endif

#define BLOCK_SIZE 16   // tokens per cache block
#define PART_BLOCKS 32  // cache blocks per partition (the workspace has a record per 512 tokens)
#define WARPS 4

__device__ __forceinline__ void unpack8(const uint4& raw, float (&f)[8])
{
    const unsigned w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[2 * i] = __uint_as_float(w[i] << 16);             // the lower-addressed bf16
        f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
}

__device__ __forceinline__ uint4 pack8(const float (&f)[8], float inv)
{
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const __nv_bfloat162 v = __floats2bfloat162_rn(f[2 * i] * inv, f[2 * i + 1] * inv);
        w[i] = *reinterpret_cast<const unsigned*>(&v);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

template <int G>
__device__ void decode_item(unsigned group,const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                            const int* block_tables, const int* context_lens, __nv_bfloat16* out, float* workspace,
                            unsigned* counters, unsigned q_heads, unsigned kv_heads, unsigned D,
                            unsigned max_blocks_per_seq, float scale, unsigned b, unsigned kvh, unsigned p, int lane)
{
    // head_dim (D) is a runtime value, 64 or 128: only the lane split depends on it.
    const int LK = D / 8;          // lanes per key
    const int KS = 32 / LK;        // keys per warp step
    // Tokens per chunk: 8, or 4 for 8 heads, whose q and accumulators fill most of the registers.
    constexpr int CHUNK = G >= 8 ? 4 : 8;
    constexpr int MAX_STEPS = CHUNK / 2;  // warp steps per chunk at head_dim 128 (half that at 64)
    const int steps = CHUNK / KS;
    const int sub = lane / LK, part = lane % LK;
    const unsigned ctx = (unsigned)__ldg(context_lens + b);
    const unsigned nblocks = (ctx + BLOCK_SIZE - 1) / BLOCK_SIZE, parts = (nblocks + PART_BLOCKS - 1) / PART_BLOCKS;
    if (p >= parts) return;
    const unsigned blk_begin = p * PART_BLOCKS, blk_end = min(nblocks, blk_begin + PART_BLOCKS);
    const float scale_log2 = scale * 1.4426950408889634f;
    const unsigned head0 = kvh * group;

    float qf[G][8];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        if (g < (int)group) unpack8(__ldg(reinterpret_cast<const uint4*>(q + ((size_t)b * q_heads + head0 + g) * D + part * 8)), qf[g]);
        else for (int e = 0; e < 8; ++e) qf[g][e] = 0.0f;  // a held head past the group: computed, never stored
#pragma unroll
        for (int e = 0; e < 8; ++e) qf[g][e] *= scale_log2;
    }
    float m[G], l[G], acc[G][8];
#pragma unroll
    for (int g = 0; g < G; ++g) {
        m[g] = NEG_INF, l[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
    }

    const size_t token_stride = (size_t)kv_heads * D;
    const int* table = block_tables + (size_t)b * max_blocks_per_seq;
    for (unsigned blk = blk_begin; blk < blk_end; ++blk) {
        const size_t base = (size_t)__ldg(table + blk) * BLOCK_SIZE * token_stride + (size_t)kvh * D + part * 8;
#pragma unroll 1
        for (int c = 0; c < BLOCK_SIZE / CHUNK; ++c) {
            const unsigned first = blk * BLOCK_SIZE + c * CHUNK;
            if (first >= ctx) break;  // uniform over the warp
            uint4 kr[MAX_STEPS], vr[MAX_STEPS];
#pragma unroll
            for (int it = 0; it < MAX_STEPS; ++it) {
                if (it >= steps) break;
                const size_t at = base + (size_t)(c * CHUNK + it * KS + sub) * token_stride;
                kr[it] = __ldg(reinterpret_cast<const uint4*>(k_cache + at));
                vr[it] = __ldg(reinterpret_cast<const uint4*>(v_cache + at));
            }
            float s[MAX_STEPS][G];
#pragma unroll
            for (int it = 0; it < MAX_STEPS; ++it) {
                if (it >= steps) break;
                float kf[8];
                unpack8(kr[it], kf);
#pragma unroll
                for (int g = 0; g < G; ++g) {
                    float dot = 0.0f;
#pragma unroll
                    for (int e = 0; e < 8; ++e) dot = fmaf(qf[g][e], kf[e], dot);
#pragma unroll
                    for (int off = LK / 2; off > 0; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
                    s[it][g] = first + it * KS + sub < ctx ? dot : NEG_INF;
                }
            }
#pragma unroll
            for (int g = 0; g < G; ++g) {
                float mc = s[0][g];
#pragma unroll
                for (int it = 1; it < MAX_STEPS; ++it)
                    if (it < steps) mc = fmaxf(mc, s[it][g]);
#pragma unroll
                for (int off = LK; off < 32; off *= 2) mc = fmaxf(mc, __shfl_xor_sync(0xffffffffu, mc, off));
                const float m_new = fmaxf(m[g], mc);  // finite: the chunk's first token is in the context
                const float alpha = exp2f(m[g] - m_new);
                l[g] *= alpha;
#pragma unroll
                for (int e = 0; e < 8; ++e) acc[g][e] *= alpha;
#pragma unroll
                for (int it = 0; it < MAX_STEPS; ++it) {
                    if (it >= steps) break;
                    const float pw = exp2f(s[it][g] - m_new);
                    float vf[8];
                    unpack8(vr[it], vf);
                    l[g] += pw;
#pragma unroll
                    for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(pw, vf[e], acc[g][e]);
                }
                m[g] = m_new;
            }
        }
    }
    // The key groups of the warp hold disjoint tokens under one maximum: add them up.
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
        for (int off = LK; off < 32; off *= 2) {
            l[g] += __shfl_xor_sync(0xffffffffu, l[g], off);
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(0xffffffffu, acc[g][e], off);
        }
    if (parts == 1) {
        if (sub == 0)
#pragma unroll
            for (int g = 0; g < G; ++g)
                if (g < (int)group)
                    *reinterpret_cast<uint4*>(out + ((size_t)b * q_heads + head0 + g) * D + part * 8) = pack8(acc[g], 1.0f / l[g]);
        return;
    }
    // Record (m, l, acc[D]) of this partition for each head of the group.
    const unsigned max_parts = (max_blocks_per_seq + PART_BLOCKS - 1) / PART_BLOCKS;
    const auto record = [&](int g, unsigned pp) {
        return workspace + (((size_t)b * q_heads + head0 + g) * max_parts + pp) * (D + 2);
    };
#pragma unroll
    for (int g = 0; g < G; ++g) {
        if (g >= (int)group) break;
        float* r = record(g, p);
        if (lane == 0) r[0] = m[g], r[1] = l[g];
        if (sub == 0)
#pragma unroll
            for (int e = 0; e < 8; ++e) r[2 + part * 8 + e] = acc[g][e];
    }
    __threadfence();
    __syncwarp();
    unsigned last = 0;
    unsigned* counter = counters + (size_t)b * kv_heads + kvh;
    if (lane == 0) last = atomicAdd(counter, 1u) == parts - 1;
    last = __shfl_sync(0xffffffffu, last, 0);
    if (!last) return;
    __threadfence();  // the other partitions' records are visible; read them from L2 (__ldcg)
#pragma unroll 1
    for (int g = 0; g < (int)group; ++g) {
        float big_m = NEG_INF;
        for (unsigned pp = 0; pp < parts; ++pp) big_m = fmaxf(big_m, __ldcg(record(g, pp)));
        float big_l = 0.0f, sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (unsigned pp = 0; pp < parts; ++pp) {
            const float* r = record(g, pp);
            const float w = exp2f(__ldcg(r) - big_m);
            big_l += w * __ldcg(r + 1);
            if (sub == 0)
#pragma unroll
                for (int e = 0; e < 8; ++e) sum[e] += w * __ldcg(r + 2 + part * 8 + e);
        }
        if (sub == 0)
            *reinterpret_cast<uint4*>(out + ((size_t)b * q_heads + head0 + g) * D + part * 8) = pack8(sum, 1.0f / big_l);
    }
    if (lane == 0) *counter = 0;  // ready for the next launch
}

template <int G>
__device__ void decode_all(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                           const int* block_tables, const int* context_lens, __nv_bfloat16* out, float* workspace,
                           unsigned* counters, unsigned num_seqs, unsigned q_heads, unsigned kv_heads, unsigned head_dim,
                           unsigned max_blocks_per_seq, float scale)
{
    const unsigned max_parts = (max_blocks_per_seq + PART_BLOCKS - 1) / PART_BLOCKS;
    const unsigned items = num_seqs * kv_heads * max_parts;
    const int lane = threadIdx.x % 32;
    for (unsigned w = blockIdx.x * WARPS + threadIdx.x / 32; w < items; w += gridDim.x * WARPS) {
        const unsigned p = w % max_parts, kvh = w / max_parts % kv_heads, b = w / (max_parts * kv_heads);
        decode_item<G>(q_heads / kv_heads, q, k_cache, v_cache, block_tables, context_lens, out, workspace, counters, q_heads, kv_heads,
                       head_dim, max_blocks_per_seq, scale, b, kvh, p, lane);
    }
}

extern "C" __global__ void __launch_bounds__(128) attention_decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, const int* block_tables, const int* context_lens, __nv_bfloat16* out, float* workspace, unsigned* counters, unsigned num_seqs, unsigned q_heads, unsigned kv_heads, unsigned head_dim, unsigned max_blocks_per_seq, float scale)
{
#define KEVO_DECODE(G) \
    decode_all<G>(q, k_cache, v_cache, block_tables, context_lens, out, workspace, counters, num_seqs, q_heads, kv_heads, head_dim, max_blocks_per_seq, scale)
    const unsigned group = q_heads / kv_heads;
    if (group == 8) KEVO_DECODE(8);
    else KEVO_DECODE(4);  // groups of 1, 2 or 4 heads
#undef KEVO_DECODE
}
