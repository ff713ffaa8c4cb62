// mla_decode_paged best-known CUDA kernel: split-KV with an in-kernel combine, best.cl's data flow in
// CUDA. One block of 256 threads per (request, group of 16 heads, partition of 512 tokens), a
// persistent grid (grid=, default 2 blocks per SM of an H100/H200) striding over those items,
// partitions fastest, so one long request spreads over many SMs; items past a request's last
// partition exit at once.
// - Every cache row is shared by all heads (MLA's one latent kv head): a tile of 16 tokens (16 x 576
//   bf16, each token's page from the block table, 16-byte loads) goes to shared memory once for the
//   group's 16 heads, whose q (16 x 576 bf16) stays there for the whole partition.
// - Scores: thread (head i / 16, token i % 16) takes one 576-wide dot product (fp32 FMAs, 8 lanes of a
//   row per 16-byte shared load). Online softmax in fp32 once per tile: a head's 16 threads are one
//   half-warp, which reduces the tile maximum and sum by xor shuffles.
// - P V: thread i owns 8 latent dims (i % 64) of 4 heads (i / 64 + 4k): 32 fp32 accumulators,
//   rescaled once per tile, then 16 tokens x 32 FMAs from the tile in shared memory.
// - A request of one partition writes out directly; otherwise each partition writes (m, l, acc[512])
//   per head to the workspace, fences, and bumps the counter of (request, the group's first head); the
//   block that arrives last merges the partitions (rescaled by exp(m_p - M), records read from L2
//   with __ldcg), writes out and sets the counter back to 0.
// Any number of heads (a last group of fewer than 16 computes on zeros and stores nothing for them);
// buffers 16-byte aligned. CUDA cores only (no mma): a tensor-core version is the next step at H = 128.
// kevo: tune GRID 264 132 528
// kevo: launch mla_decode_paged block=256,1 grid=GRID,1
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef GRID
#define GRID 264
#endif

#define D_QK 576
#define D_V 512
#define HG 16             // heads per block
#define TILE 16           // tokens per tile
#define KSTRIDE 584       // a tile row in shared memory: 576 + 8 bf16 (16-byte rows, staggered banks)
#define PART_TOKENS 512   // tokens per partition (the workspace has a record per 512 tokens)
#define CHUNKS (D_QK / 8) // 72 chunks of 8 bf16 per row

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

extern "C" __global__ void __launch_bounds__(256) mla_decode_paged(const __nv_bfloat16* q, const __nv_bfloat16* kv_cache, const int* block_table, const int* cache_seqlens, __nv_bfloat16* out, float* workspace, unsigned* counters, unsigned num_seqs, unsigned num_heads, unsigned page_size, unsigned max_pages_per_seq, float softmax_scale)
{
    __shared__ __align__(16) __nv_bfloat16 q_s[HG * D_QK];
    __shared__ __align__(16) __nv_bfloat16 k_s[TILE * KSTRIDE];
    __shared__ float p_s[HG * TILE], alpha_s[HG], l_s[HG];
    __shared__ unsigned last_s;

    const unsigned tid = threadIdx.x;
    const unsigned groups = (num_heads + HG - 1) / HG;
    const unsigned max_parts = (max_pages_per_seq * page_size + PART_TOKENS - 1) / PART_TOKENS;
    const unsigned items = num_seqs * groups * max_parts;
    const unsigned sh = tid / TILE, sj = tid % TILE;    // score phase: head, token (a head = a half-warp)
    const unsigned vd = (tid % 64) * 8, vh = tid / 64;  // P V phase: dims vd..vd+7 of heads vh + 4k

    for (unsigned item = blockIdx.x; item < items; item += gridDim.x) {
        const unsigned p = item % max_parts, g = item / max_parts % groups, b = item / (max_parts * groups);
        const unsigned ctx = (unsigned)__ldg(cache_seqlens + b);
        const unsigned parts = (ctx + PART_TOKENS - 1) / PART_TOKENS;
        if (p >= parts) continue;  // uniform over the block
        const unsigned h0 = g * HG, t_begin = p * PART_TOKENS, t_end = min(ctx, t_begin + PART_TOKENS);
        const int* table = block_table + (size_t)b * max_pages_per_seq;

        __syncthreads();  // the previous item is done with q_s, k_s and l_s
        // q of the group's heads (zeros for heads past num_heads).
        for (unsigned i = tid; i < HG * CHUNKS; i += 256) {
            const unsigned hh = i / CHUNKS, c = i % CHUNKS;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (h0 + hh < num_heads) v = __ldg(reinterpret_cast<const uint4*>(q + ((size_t)b * num_heads + h0 + hh) * D_QK) + c);
            *reinterpret_cast<uint4*>(q_s + hh * D_QK + c * 8) = v;
        }
        float m_run = NEG_INF, l_run = 0.0f;  // of head sh (the same in its 16 threads)
        float acc[4][8];
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[k][e] = 0.0f;

        for (unsigned t0 = t_begin; t0 < t_end; t0 += TILE) {
            const unsigned n = min((unsigned)TILE, t_end - t0);
            __syncthreads();  // the previous tile's P V is done with k_s and p_s
            for (unsigned i = tid; i < n * CHUNKS; i += 256) {
                const unsigned j = i / CHUNKS, c = i % CHUNKS, t = t0 + j;
                const unsigned page = (unsigned)__ldg(table + t / page_size);
                const uint4* row = reinterpret_cast<const uint4*>(kv_cache + ((size_t)page * page_size + t % page_size) * D_QK);
                *reinterpret_cast<uint4*>(k_s + j * KSTRIDE + c * 8) = __ldg(row + c);
            }
            __syncthreads();
            float dot = NEG_INF;
            if (sj < n) {
                float sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                const uint4* qr = reinterpret_cast<const uint4*>(q_s + sh * D_QK);
                const uint4* kr = reinterpret_cast<const uint4*>(k_s + sj * KSTRIDE);
#pragma unroll 4
                for (unsigned c = 0; c < CHUNKS; ++c) {
                    float qf[8], kf[8];
                    unpack8(qr[c], qf);
                    unpack8(kr[c], kf);
#pragma unroll
                    for (int e = 0; e < 8; ++e) sum[e] = fmaf(qf[e], kf[e], sum[e]);
                }
                dot = softmax_scale * (((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7])));
            }
            // The half-warp of head sh: the tile maximum, then the probabilities and their sum.
            float m_tile = dot;
#pragma unroll
            for (int off = 8; off > 0; off /= 2) m_tile = fmaxf(m_tile, __shfl_xor_sync(0xffffffffu, m_tile, off));
            const float m_new = fmaxf(m_run, m_tile);  // finite: the tile's first token is in the context
            const float alpha = expf(m_run - m_new);
            const float pw = sj < n ? expf(dot - m_new) : 0.0f;
            float l_tile = pw;
#pragma unroll
            for (int off = 8; off > 0; off /= 2) l_tile += __shfl_xor_sync(0xffffffffu, l_tile, off);
            l_run = l_run * alpha + l_tile;
            m_run = m_new;
            p_s[sh * TILE + sj] = pw;
            if (sj == 0) alpha_s[sh] = alpha;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const float a = alpha_s[vh + 4 * k];
#pragma unroll
                for (int e = 0; e < 8; ++e) acc[k][e] *= a;
            }
            for (unsigned j = 0; j < n; ++j) {
                float vf[8];
                unpack8(*reinterpret_cast<const uint4*>(k_s + j * KSTRIDE + vd), vf);
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const float w = p_s[(vh + 4 * k) * TILE + j];
#pragma unroll
                    for (int e = 0; e < 8; ++e) acc[k][e] = fmaf(w, vf[e], acc[k][e]);
                }
            }
        }
        if (sj == 0) l_s[sh] = l_run;
        __syncthreads();

        if (parts == 1) {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const unsigned hh = vh + 4 * k;
                if (h0 + hh < num_heads)
                    *reinterpret_cast<uint4*>(out + ((size_t)b * num_heads + h0 + hh) * D_V + vd) = pack8(acc[k], 1.0f / l_s[hh]);
            }
            continue;
        }
        // This partition's record per head: (m, l, acc[512]).
        if (sj == 0 && h0 + sh < num_heads) {
            float* r = workspace + (((size_t)b * num_heads + h0 + sh) * max_parts + p) * (D_V + 2);
            r[0] = m_run, r[1] = l_run;
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const unsigned hh = vh + 4 * k;
            if (h0 + hh >= num_heads) continue;
            float* r = workspace + (((size_t)b * num_heads + h0 + hh) * max_parts + p) * (D_V + 2) + 2 + vd;
#pragma unroll
            for (int e = 0; e < 8; ++e) r[e] = acc[k][e];
        }
        __threadfence();
        __syncthreads();
        unsigned* counter = counters + (size_t)b * num_heads + h0;
        if (tid == 0) last_s = atomicAdd(counter, 1u) == parts - 1;
        __syncthreads();
        if (!last_s) continue;
        __threadfence();  // the other partitions' records are visible: read them from L2 (__ldcg)
#pragma unroll 1
        for (int k = 0; k < 4; ++k) {
            const unsigned hh = vh + 4 * k;
            if (h0 + hh >= num_heads) continue;
            const float* rec = workspace + ((size_t)b * num_heads + h0 + hh) * max_parts * (D_V + 2);
            float big_m = NEG_INF;
            for (unsigned pp = 0; pp < parts; ++pp) big_m = fmaxf(big_m, __ldcg(rec + pp * (D_V + 2)));
            float big_l = 0.0f, sum[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (unsigned pp = 0; pp < parts; ++pp) {
                const float* r = rec + pp * (D_V + 2);
                const float w = expf(__ldcg(r) - big_m);
                big_l += w * __ldcg(r + 1);
#pragma unroll
                for (int e = 0; e < 8; ++e) sum[e] += w * __ldcg(r + 2 + vd + e);
            }
            *reinterpret_cast<uint4*>(out + ((size_t)b * num_heads + h0 + hh) * D_V + vd) = pack8(sum, 1.0f / big_l);
        }
        if (tid == 0) *counter = 0;  // ready for the next launch
    }
}
