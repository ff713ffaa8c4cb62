// attention_prefill best-known CUDA kernel: flash-attention 2 style on the tensor cores.
// - Work item = 64 consecutive query rows (a tile of the batch's tokens, which may straddle
//   sequences) of one head; a persistent grid (grid=, default 2 blocks per SM of an H200: ~240
//   registers a thread, so every block is resident) strides over the items, the last tiles (the
//   longest causal spans) first, so the heavy items start early.
// - 4 warps, 16 query rows each. Q is held in registers as mma A fragments; S = Q K^T and O += P V
//   with mma.sync m16n8k16 bf16 -> fp32 (inline PTX), operands from shared memory with ldmatrix
//   (.trans for V), rows padded by 8 bf16 so that ldmatrix is free of bank conflicts.
// - K and V tiles of 64 keys arrive by cp.async (16 B, zero-filled past the last token): V(j) is
//   loaded while S(j) is computed, K(j+1) while P(j) V(j) is, one buffer each.
// - Online softmax in registers (exp2 with scale * log2 e folded in), the row maximum and sum
//   reduced over the 4 threads of a quad. P goes into the P V product as two bf16 (hi + lo, exact to
//   ~2^-17): FlashAttention's single bf16 P is off by ~2^-9 |v| per dominant key, at the edge of the
//   task's tolerance on short rows and spikes. It costs a third more mma (P V twice, Q K^T once).
// - Causal tile skipping: key tiles run from the first row's sequence start to the tile's last row;
//   a warp skips the math of a key tile that none of its rows may see. Per element, key j is kept
//   for row i iff start(i) <= j <= i.
// head_dim is 64 or 128; buffers 16-byte aligned (rows of q, k, v are d bf16, a multiple of 16 B).
// kevo: tune GRID 264 132 396 528
// kevo: launch attention_prefill block=128,1 grid=GRID,1 smem=52224
#include <cuda_bf16.h>

#define NEG_INF __int_as_float(0xff800000u)  // -inf (NVRTC has no INFINITY)
#ifndef GRID
#define GRID 264
#endif

#define BM 64   // query rows per work item (4 warps x 16)
#define BN 64   // keys per tile
#define PAD 8   // bf16 of padding per shared-memory row

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool valid)
{
    // src-size 0 zero-fills the 16 bytes without reading src.
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// c += a (16x16, row) * b (16x8, col), bf16 operands, fp32 accumulators.
__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two probabilities (a at the lower column) as bf16 pairs hi and lo with hi + lo = (a, b) to about
// 2^-17: the rounding of hi alone (2^-9 relative) is too coarse for the task's tolerance where a
// few keys dominate a row.
__device__ __forceinline__ void split_bf16(float a, float b, unsigned& hi, unsigned& lo)
{
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);  // .x (a) in the low half
    const float2 hf = __bfloat1622float2(h);
    const __nv_bfloat162 l = __floats2bfloat162_rn(a - hf.x, b - hf.y);
    hi = *reinterpret_cast<const unsigned*>(&h);
    lo = *reinterpret_cast<const unsigned*>(&l);
}

// The start of the sequence holding token i: the largest cu_seqlens[b] <= i.
__device__ unsigned sequence_start(const int* cu_seqlens, unsigned num_seqs, unsigned i)
{
    unsigned lo = 0, hi = num_seqs;  // cu_seqlens[lo] <= i < cu_seqlens[hi]
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if ((unsigned)__ldg(cu_seqlens + mid) <= i) lo = mid;
        else hi = mid;
    }
    return (unsigned)__ldg(cu_seqlens + lo);
}

// 64 rows [row0, row0 + 64) of head `head` of a [rows, heads, D] tensor into shared memory (row
// stride D + PAD), rows at or past row_end zero-filled. Asynchronous: commit and wait afterwards.
template <int D>
__device__ __forceinline__ void load_rows(__nv_bfloat16* dst, const __nv_bfloat16* src, unsigned row0, unsigned row_end,
                                          unsigned heads, unsigned head)
{
    constexpr int chunks = D / 8;  // 16-byte chunks per row
    for (int c = threadIdx.x; c < 64 * chunks; c += 128) {
        const int r = c / chunks, col = (c % chunks) * 8;
        const unsigned row = row0 + r;
        const bool valid = row < row_end;
        const __nv_bfloat16* from = valid ? src + ((size_t)row * heads + head) * D + col : src;
        cp_async16(smem_addr(dst + r * (D + PAD) + col), from, valid);
    }
}

template <int D>
__device__ void attend_tile(__nv_bfloat16* smem, const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                            const int* cu_seqlens, __nv_bfloat16* out, unsigned tokens, unsigned num_seqs,
                            unsigned q_heads, unsigned kv_heads, float scale, unsigned tile, unsigned h)
{
    constexpr int stride = D + PAD;
    __nv_bfloat16* sq = smem;
    __nv_bfloat16* sk = sq + BM * stride;
    __nv_bfloat16* sv = sk + BN * stride;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t4 = lane & 3;
    const unsigned t0 = tile * BM, kvh = h / (q_heads / kv_heads);
    const unsigned kv_begin = sequence_start(cu_seqlens, num_seqs, t0), kv_end = min(t0 + BM, tokens);

    load_rows<D>(sq, q, t0, tokens, q_heads, h);
    load_rows<D>(sk, k, kv_begin, kv_end, kv_heads, kvh);
    cp_async_commit();
    cp_async_wait_all();
    __syncthreads();

    const int r0 = warp * 16;
    unsigned qf[D / 16][4];
#pragma unroll
    for (int kc = 0; kc < D / 16; ++kc)
        ldmatrix_x4(qf[kc], smem_addr(sq + (r0 + (lane % 8) + ((lane / 8) % 2) * 8) * stride + kc * 16 + (lane / 16) * 8));

    // This thread's two rows (g and g + 8 of the warp's 16) and the keys they may see from.
    const unsigned row_a = t0 + r0 + g, row_b = row_a + 8;
    const unsigned start_a = row_a < tokens ? sequence_start(cu_seqlens, num_seqs, row_a) : 0xffffffffu;
    const unsigned start_b = row_b < tokens ? sequence_start(cu_seqlens, num_seqs, row_b) : 0xffffffffu;
    const unsigned warp_first = t0 + r0;
    const bool warp_live = warp_first < tokens;
    const unsigned warp_last = min(warp_first + 15, tokens - 1);
    const unsigned warp_lo = warp_live ? sequence_start(cu_seqlens, num_seqs, warp_first) : 0;

    float o[D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m_a = NEG_INF, m_b = NEG_INF, l_a = 0.0f, l_b = 0.0f;
    const float scale_log2 = scale * 1.4426950408889634f;

    for (unsigned j0 = kv_begin; j0 < kv_end; j0 += BN) {
        if (j0 != kv_begin) {  // K(j0) was issued during the previous P V; every warp is past it
            cp_async_wait_all();
            __syncthreads();
        }
        load_rows<D>(sv, v, j0, kv_end, kv_heads, kvh);
        cp_async_commit();
        const bool active = warp_live && j0 <= warp_last && j0 + BN > warp_lo;
        float s[BN / 8][4];
        if (active) {
#pragma unroll
            for (int n = 0; n < BN / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
            for (int kc = 0; kc < D / 16; ++kc)
#pragma unroll
                for (int np = 0; np < BN / 16; ++np) {
                    unsigned kb[4];
                    ldmatrix_x4(kb, smem_addr(sk + (np * 16 + (lane % 8) + (lane / 16) * 8) * stride + kc * 16 +
                                              ((lane / 8) % 2) * 8));
                    mma_bf16(s[2 * np], qf[kc], kb[0], kb[1]);
                    mma_bf16(s[2 * np + 1], qf[kc], kb[2], kb[3]);
                }
            // Mask, scale into the log2 domain, and the tile's row maxima.
            float mt_a = NEG_INF, mt_b = NEG_INF;
#pragma unroll
            for (int n = 0; n < BN / 8; ++n)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const unsigned j = j0 + n * 8 + 2 * t4 + e;
                    s[n][e] = (j >= start_a && j <= row_a) ? s[n][e] * scale_log2 : NEG_INF;
                    s[n][2 + e] = (j >= start_b && j <= row_b) ? s[n][2 + e] * scale_log2 : NEG_INF;
                    mt_a = fmaxf(mt_a, s[n][e]);
                    mt_b = fmaxf(mt_b, s[n][2 + e]);
                }
            mt_a = fmaxf(mt_a, __shfl_xor_sync(0xffffffffu, mt_a, 1));
            mt_a = fmaxf(mt_a, __shfl_xor_sync(0xffffffffu, mt_a, 2));
            mt_b = fmaxf(mt_b, __shfl_xor_sync(0xffffffffu, mt_b, 1));
            mt_b = fmaxf(mt_b, __shfl_xor_sync(0xffffffffu, mt_b, 2));
            const float mn_a = fmaxf(m_a, mt_a), mn_b = fmaxf(m_b, mt_b);
            // A row with no key seen yet keeps -inf: subtract 0 then, so that exp2(-inf) = 0, not NaN.
            const float mu_a = mn_a == NEG_INF ? 0.0f : mn_a, mu_b = mn_b == NEG_INF ? 0.0f : mn_b;
            const float alpha_a = exp2f(m_a - mu_a), alpha_b = exp2f(m_b - mu_b);
            float sum_a = 0.0f, sum_b = 0.0f;
#pragma unroll
            for (int n = 0; n < BN / 8; ++n) {
                s[n][0] = exp2f(s[n][0] - mu_a);
                s[n][1] = exp2f(s[n][1] - mu_a);
                s[n][2] = exp2f(s[n][2] - mu_b);
                s[n][3] = exp2f(s[n][3] - mu_b);
                sum_a += s[n][0] + s[n][1];
                sum_b += s[n][2] + s[n][3];
            }
            l_a = l_a * alpha_a + sum_a;
            l_b = l_b * alpha_b + sum_b;
#pragma unroll
            for (int n = 0; n < D / 8; ++n) {
                o[n][0] *= alpha_a, o[n][1] *= alpha_a;
                o[n][2] *= alpha_b, o[n][3] *= alpha_b;
            }
            m_a = mn_a, m_b = mn_b;
        }
        cp_async_wait_all();  // V(j0) has landed
        __syncthreads();      // and every warp is done with K(j0)
        if (j0 + BN < kv_end) {
            load_rows<D>(sk, k, j0 + BN, kv_end, kv_heads, kvh);
            cp_async_commit();
        }
        if (active) {
#pragma unroll
            for (int kk = 0; kk < BN / 16; ++kk) {
                // A fragment of P for keys 16 kk .. 16 kk + 15 (the C layout of two n-tiles), as hi + lo.
                unsigned hi[4], lo[4];
                split_bf16(s[2 * kk][0], s[2 * kk][1], hi[0], lo[0]);
                split_bf16(s[2 * kk][2], s[2 * kk][3], hi[1], lo[1]);
                split_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1], hi[2], lo[2]);
                split_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3], hi[3], lo[3]);
#pragma unroll
                for (int dp = 0; dp < D / 16; ++dp) {
                    unsigned vb[4];
                    ldmatrix_x4_trans(vb, smem_addr(sv + (kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8) * stride + dp * 16 +
                                                    (lane / 16) * 8));
                    mma_bf16(o[2 * dp], hi, vb[0], vb[1]);
                    mma_bf16(o[2 * dp + 1], hi, vb[2], vb[3]);
                    mma_bf16(o[2 * dp], lo, vb[0], vb[1]);
                    mma_bf16(o[2 * dp + 1], lo, vb[2], vb[3]);
                }
            }
        }
    }
    cp_async_wait_all();

    l_a += __shfl_xor_sync(0xffffffffu, l_a, 1);
    l_a += __shfl_xor_sync(0xffffffffu, l_a, 2);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 1);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 2);
    if (row_a < tokens) {
        const float inv = 1.0f / l_a;
        __nv_bfloat16* dst = out + ((size_t)row_a * q_heads + h) * D + 2 * t4;
#pragma unroll
        for (int n = 0; n < D / 8; ++n)
            *reinterpret_cast<__nv_bfloat162*>(dst + n * 8) = __floats2bfloat162_rn(o[n][0] * inv, o[n][1] * inv);
    }
    if (row_b < tokens) {
        const float inv = 1.0f / l_b;
        __nv_bfloat16* dst = out + ((size_t)row_b * q_heads + h) * D + 2 * t4;
#pragma unroll
        for (int n = 0; n < D / 8; ++n)
            *reinterpret_cast<__nv_bfloat162*>(dst + n * 8) = __floats2bfloat162_rn(o[n][2] * inv, o[n][3] * inv);
    }
}

extern "C" __global__ void __launch_bounds__(128) attention_prefill(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const int* cu_seqlens, __nv_bfloat16* out, unsigned tokens, unsigned num_seqs, unsigned q_heads, unsigned kv_heads, unsigned head_dim, float scale)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __nv_bfloat16* smem = reinterpret_cast<__nv_bfloat16*>(smem_raw);
    const unsigned tiles = (tokens + BM - 1) / BM, items = tiles * q_heads;
    for (unsigned w = blockIdx.x; w < items; w += gridDim.x) {
        const unsigned tile = tiles - 1 - w / q_heads, h = w % q_heads;  // the longest spans first
        if (head_dim == 128)
            attend_tile<128>(smem, q, k, v, cu_seqlens, out, tokens, num_seqs, q_heads, kv_heads, scale, tile, h);
        else
            attend_tile<64>(smem, q, k, v, cu_seqlens, out, tokens, num_seqs, q_heads, kv_heads, scale, tile, h);
        __syncthreads();  // shared memory is reused by the next item
    }
}
