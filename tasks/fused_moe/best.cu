// fused_moe best-known CUDA kernel: the (token, choice) pairs grouped by expert, then both expert
// GEMMs on the tensor cores (mma.sync m16n8k16 bf16 -> fp32, inline PTX).
// - moe_align: one 1024-thread block; a shared-memory histogram of the experts, a block-wide scan
//   (warp shuffles) for the offsets, a scatter with shared atomics (order within an expert is free).
// - moe_gate_up: tiles of BM = 32 pairs of one expert x BN = 64 columns of I, the gate and the up
//   rows of those columns together, so silu(g) * u is formed in registers and rounded once into act.
//   The x rows are gathered through sorted_pairs. A persistent grid walks the (m-tile, n-tile)
//   items; an expert's m-tiles come from a block-wide scan of ceil(count / BM), so an empty expert
//   costs nothing and its weights are never read.
// - moe_down: the same tiles over act (rows by pair) and W2; each result times its top-k weight is
//   added into accum with fp32 atomics (the k choices of a token land in different tiles).
// - moe_finalize: accum to bf16, four per thread.
// 4 warps per tile (2 along M x 2 along N), each 16 x 32 per weight matrix; BK = 32 staged in shared
// memory with 16-byte loads (rows padded to 40 elements: conflict-free fragment loads). H and I are
// multiples of 64, so every row is 16-byte aligned and no K or N tail exists.
// kevo: tune GRID 1056 528 2112
// kevo: launch moe_align block=1024
// kevo: launch moe_gate_up block=128,1 grid=GRID
// kevo: launch moe_down block=128,1 grid=GRID
// kevo: launch moe_finalize block=256 per_thread=4
#include <cuda_bf16.h>
#ifndef GRID
#define GRID 1056
#endif
#define BM 32
#define BN 64
#define BK 32
#define LDS 40
#define MAX_EXPERTS 1024

// Exclusive prefix over the block's threads (thread 0 first); blockDim a multiple of 32, <= 1024.
__device__ int block_exclusive_scan(int count, int* scratch)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int inclusive = count;
    for (int o = 1; o < 32; o <<= 1) {
        const int w = __shfl_up_sync(0xffffffffu, inclusive, o);
        if (lane >= (unsigned)o) inclusive += w;
    }
    if (lane == 31) scratch[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        int s = lane < blockDim.x / 32 ? scratch[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const int w = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= (unsigned)o) s += w;
        }
        scratch[32 + lane] = s;
    }
    __syncthreads();
    const int result = (warp ? scratch[32 + warp - 1] : 0) + inclusive - count;
    __syncthreads();
    return result;
}

extern "C" __global__ void moe_align(const int* topk_ids, int* expert_offsets, int* sorted_pairs, unsigned pairs, unsigned experts)
{
    __shared__ int count[MAX_EXPERTS];
    __shared__ int cursor[MAX_EXPERTS];
    __shared__ int scratch[64];
    if (blockIdx.x != 0) return;
    for (unsigned e = threadIdx.x; e < experts; e += blockDim.x) count[e] = 0;
    __syncthreads();
    for (unsigned p = threadIdx.x; p < pairs; p += blockDim.x) atomicAdd(&count[topk_ids[p]], 1);
    __syncthreads();
    // Each thread owns a run of consecutive experts.
    const unsigned per = (experts + blockDim.x - 1) / blockDim.x, first = threadIdx.x * per;
    int mine = 0;
    for (unsigned e = first; e < first + per && e < experts; ++e) mine += count[e];
    int at = block_exclusive_scan(mine, scratch);
    for (unsigned e = first; e < first + per && e < experts; ++e) {
        expert_offsets[e] = at;
        cursor[e] = at;
        at += count[e];
    }
    if (threadIdx.x == blockDim.x - 1) expert_offsets[experts] = at;
    __syncthreads();
    for (unsigned p = threadIdx.x; p < pairs; p += blockDim.x) sorted_pairs[atomicAdd(&cursor[topk_ids[p]], 1)] = (int)p;
}

// tile_start[e] = the first m-tile of expert e (tiles of BM sorted pairs, expert by expert);
// tile_start[experts] = the total. Block-wide, from the offsets.
__device__ void expert_tiles(const int* expert_offsets, unsigned experts, int* tile_start, int* scratch)
{
    const unsigned per = (experts + blockDim.x - 1) / blockDim.x, first = threadIdx.x * per;
    int mine = 0;
    for (unsigned e = first; e < first + per && e < experts; ++e)
        mine += (expert_offsets[e + 1] - expert_offsets[e] + BM - 1) / BM;
    int at = block_exclusive_scan(mine, scratch);
    for (unsigned e = first; e < first + per && e < experts; ++e) {
        tile_start[e] = at;
        at += (expert_offsets[e + 1] - expert_offsets[e] + BM - 1) / BM;
    }
    if (threadIdx.x == blockDim.x - 1) tile_start[experts] = at;
    __syncthreads();
}

// The expert whose tiles include m-tile mt: the last e with tile_start[e] <= mt (binary search).
__device__ unsigned expert_of(const int* tile_start, unsigned experts, int mt)
{
    unsigned lo = 0, hi = experts;  // tile_start[lo] <= mt < tile_start[hi]
    while (hi - lo > 1) {
        const unsigned mid = (lo + hi) / 2;
        if (tile_start[mid] <= mt) lo = mid;
        else hi = mid;
    }
    return lo;
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned smem_word(const __nv_bfloat16* p) { return *reinterpret_cast<const unsigned*>(p); }

// acc[b][j] += A (BM x K, rows a_row[r], nullptr = zero row) times B_b^T (BN rows from b_rows[b],
// row stride K), for this warp's 16 rows and its four n8 tiles.
template <int NB>
__device__ __forceinline__ void tile_gemm(const __nv_bfloat16* const* a_row, const __nv_bfloat16* const* b_rows, unsigned K,
                                          float (&acc)[NB][4][4], __nv_bfloat16 (*As)[LDS], __nv_bfloat16 (*Bs)[BN][LDS])
{
    const unsigned tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const unsigned wm = warp & 1, wn = warp >> 1, g = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int b = 0; b < NB; ++b)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[b][j][q] = 0.0f;
    for (unsigned k0 = 0; k0 < K; k0 += BK) {
        {
            const unsigned r = tid >> 2, c = (tid & 3) * 8;
            uint4 v = make_uint4(0u, 0u, 0u, 0u);
            if (a_row[r]) v = __ldg(reinterpret_cast<const uint4*>(a_row[r] + k0 + c));
            *reinterpret_cast<uint4*>(&As[r][c]) = v;
        }
#pragma unroll
        for (int b = 0; b < NB; ++b)
#pragma unroll
            for (int q = 0; q < 2; ++q) {
                const unsigned idx = tid + 128 * q, r = idx >> 2, c = (idx & 3) * 8;
                *reinterpret_cast<uint4*>(&Bs[b][r][c]) =
                    __ldg(reinterpret_cast<const uint4*>(b_rows[b] + (size_t)r * K + k0 + c));
            }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[4];
            a[0] = smem_word(&As[wm * 16 + g][kk + 2 * tq]);
            a[1] = smem_word(&As[wm * 16 + g + 8][kk + 2 * tq]);
            a[2] = smem_word(&As[wm * 16 + g][kk + 8 + 2 * tq]);
            a[3] = smem_word(&As[wm * 16 + g + 8][kk + 8 + 2 * tq]);
#pragma unroll
            for (int b = 0; b < NB; ++b)
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const unsigned n = wn * 32 + j * 8 + g;
                    mma_bf16(acc[b][j], a, smem_word(&Bs[b][n][kk + 2 * tq]), smem_word(&Bs[b][n][kk + 8 + 2 * tq]));
                }
        }
        __syncthreads();
    }
}

__device__ __forceinline__ float silu_mul(float g, float u) { return g / (1.0f + __expf(-g)) * u; }

extern "C" __global__ void moe_gate_up(const __nv_bfloat16* x, const __nv_bfloat16* w13, const int* topk_ids, const int* expert_offsets, const int* sorted_pairs, __nv_bfloat16* act, unsigned tokens, unsigned topk, unsigned experts, unsigned hidden, unsigned inter)
{
    __shared__ __align__(16) __nv_bfloat16 As[BM][LDS];
    __shared__ __align__(16) __nv_bfloat16 Bs[2][BN][LDS];
    __shared__ int tile_start[MAX_EXPERTS + 1];
    __shared__ int scratch[64];
    __shared__ const __nv_bfloat16* a_row[BM];
    __shared__ int a_pair[BM];
    expert_tiles(expert_offsets, experts, tile_start, scratch);
    const unsigned n_tiles = inter / BN;
    const unsigned items = (unsigned)tile_start[experts] * n_tiles;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp & 1, wn = warp >> 1;
    for (unsigned w = blockIdx.x; w < items; w += gridDim.x) {
        const int mt = (int)(w / n_tiles);
        const unsigned nt = w % n_tiles, e = expert_of(tile_start, experts, mt);
        const int s0 = expert_offsets[e] + (mt - tile_start[e]) * BM, s_end = expert_offsets[e + 1];
        if (threadIdx.x < BM) {
            const int s = s0 + (int)threadIdx.x;
            const int p = s < s_end ? sorted_pairs[s] : -1;
            a_pair[threadIdx.x] = p;
            a_row[threadIdx.x] = p >= 0 ? x + (size_t)(p / topk) * hidden : nullptr;
        }
        __syncthreads();
        const __nv_bfloat16* b_rows[2] = {w13 + ((size_t)e * 2 * inter + nt * BN) * hidden,
                                          w13 + ((size_t)e * 2 * inter + inter + nt * BN) * hidden};
        float acc[2][4][4];
        tile_gemm<2>(a_row, b_rows, hidden, acc, As, Bs);
        const unsigned g = lane >> 2, tq = lane & 3;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int p = a_pair[wm * 16 + g + 8 * half];
            if (p < 0) continue;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const unsigned col = nt * BN + wn * 32 + j * 8 + 2 * tq;
                const __nv_bfloat162 v = __floats2bfloat162_rn(silu_mul(acc[0][j][2 * half], acc[1][j][2 * half]),
                                                               silu_mul(acc[0][j][2 * half + 1], acc[1][j][2 * half + 1]));
                *reinterpret_cast<__nv_bfloat162*>(act + (size_t)p * inter + col) = v;
            }
        }
        __syncthreads();  // a_pair and a_row are rewritten for the next item
    }
}

extern "C" __global__ void moe_down(const __nv_bfloat16* act, const __nv_bfloat16* w2, const int* topk_ids, const float* topk_weights, const int* expert_offsets, const int* sorted_pairs, float* accum, unsigned tokens, unsigned topk, unsigned experts, unsigned hidden, unsigned inter)
{
    __shared__ __align__(16) __nv_bfloat16 As[BM][LDS];
    __shared__ __align__(16) __nv_bfloat16 Bs[1][BN][LDS];
    __shared__ int tile_start[MAX_EXPERTS + 1];
    __shared__ int scratch[64];
    __shared__ const __nv_bfloat16* a_row[BM];
    __shared__ int a_pair[BM];
    expert_tiles(expert_offsets, experts, tile_start, scratch);
    const unsigned n_tiles = hidden / BN;
    const unsigned items = (unsigned)tile_start[experts] * n_tiles;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wm = warp & 1, wn = warp >> 1;
    for (unsigned w = blockIdx.x; w < items; w += gridDim.x) {
        const int mt = (int)(w / n_tiles);
        const unsigned nt = w % n_tiles, e = expert_of(tile_start, experts, mt);
        const int s0 = expert_offsets[e] + (mt - tile_start[e]) * BM, s_end = expert_offsets[e + 1];
        if (threadIdx.x < BM) {
            const int s = s0 + (int)threadIdx.x;
            const int p = s < s_end ? sorted_pairs[s] : -1;
            a_pair[threadIdx.x] = p;
            a_row[threadIdx.x] = p >= 0 ? act + (size_t)p * inter : nullptr;
        }
        __syncthreads();
        const __nv_bfloat16* b_rows[1] = {w2 + ((size_t)e * hidden + nt * BN) * inter};
        float acc[1][4][4];
        tile_gemm<1>(a_row, b_rows, inter, acc, As, Bs);
        const unsigned g = lane >> 2, tq = lane & 3;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int p = a_pair[wm * 16 + g + 8 * half];
            if (p < 0) continue;
            const float wt = topk_weights[p];
            float* dst = accum + (size_t)(p / topk) * hidden;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const unsigned col = nt * BN + wn * 32 + j * 8 + 2 * tq;
                atomicAdd(dst + col, wt * acc[0][j][2 * half]);
                atomicAdd(dst + col + 1, wt * acc[0][j][2 * half + 1]);
            }
        }
        __syncthreads();
    }
}

extern "C" __global__ void moe_finalize(const float* accum, __nv_bfloat16* out, unsigned count)
{
    const unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if ((size_t)v * 4 + 3 < count) {
        const float4 a = __ldg(reinterpret_cast<const float4*>(accum) + v);
        __nv_bfloat162* dst = reinterpret_cast<__nv_bfloat162*>(out + (size_t)v * 4);
        dst[0] = __floats2bfloat162_rn(a.x, a.y);
        dst[1] = __floats2bfloat162_rn(a.z, a.w);
    } else {
        for (size_t n = (size_t)v * 4; n < count; ++n) out[n] = __float2bfloat16_rn(accum[n]);
    }
}
