// gemm_w8a8 best-known CUDA kernel: C = bf16(a_scale[m] b_scale[n] (A * B^T)) on the integer tensor
// cores with mma.sync.m16n8k32 (s8 in, exact s32 accumulate) through inline PTX. The structure is
// gemm_bf16's best kernel with bytes for halves (a K slice of 64 int8 is the 64-byte row of that
// kernel's 32-wide bf16 slice, so the swizzle and the ldmatrix addressing are the same):
//   - 128 x 128 output tiles per block of 256 threads (8 warps as 2 x 4, each warp 64 x 32: 4 x 4
//     mma tiles, 64 int32 accumulators per thread);
//   - a 4-stage cp.async pipeline of 64-wide K slices (16 KB per stage, 64 KB dynamic shared
//     memory: smem= below);
//   - ldmatrix.x4 fragment loads (an 8 x 8 b16 matrix is 8 rows of 16 int8, exactly the s8 fragment
//     of m16n8k32) from an XOR-swizzled layout (16-byte chunk c of row r at c ^ ((r >> 1) & 3));
//   - the scales applied once per output in the epilogue, in fp32, one rounding.
// Correct at every size: rows beyond M and N are zero-filled by cp.async with a source size of 0
// (address clamped to row 0) and not stored; K is a multiple of 64 at every size (the kernel's
// slice). M = 1 decode runs but wastes most of each tile (a split-K variant would serve it better);
// sm_90a wgmma (s8) with TMA is what would close the gap to cuBLASLt at prefill.
// kevo: launch gemm_w8a8 block=128,2 per_thread=1,64 smem=65536
#include <cuda_bf16.h>

#define BM 128
#define BN 128
#define BK 64                               // int8 elements: 64 bytes per row
#define STAGES 4
#define THREADS 256
#define TILE_BYTES (BM * BK)               // one operand's slice: 128 rows of 64 bytes
#define STAGE_BYTES (2 * TILE_BYTES)       // A then B

__device__ __forceinline__ unsigned swizzled(unsigned row, unsigned chunk)
{
    return (row * 4u + (chunk ^ ((row >> 1) & 3u))) * 16u;
}

__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool valid)
{
    const int bytes = valid ? 16 : 0;  // 0: nothing is read, the 16 bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

__device__ __forceinline__ void mma_s8(int* d, const unsigned* a, const unsigned* b)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One K slice of A and B into a stage: 512 chunks of 16 bytes per operand, two per thread each.
__device__ __forceinline__ void load_slice(unsigned stage_addr, const signed char* a, const signed char* b,
                                           unsigned m, unsigned n, unsigned k, unsigned block_m, unsigned block_n,
                                           unsigned k0, unsigned tid)
{
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const unsigned id = tid + i * THREADS, row = id / 4, chunk = id % 4;
        const unsigned ar = block_m + row, br = block_n + row;
        const bool a_ok = ar < m, b_ok = br < n;
        const signed char* a_src = a + (size_t)(a_ok ? ar : 0) * k + k0 + chunk * 16;
        const signed char* b_src = b + (size_t)(b_ok ? br : 0) * k + k0 + chunk * 16;
        cp_async_16(stage_addr + swizzled(row, chunk), a_src, a_ok);
        cp_async_16(stage_addr + TILE_BYTES + swizzled(row, chunk), b_src, b_ok);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) gemm_w8a8(const signed char* a, const float* a_scale,
                                                                const signed char* b, const float* b_scale,
                                                                __nv_bfloat16* c, unsigned m, unsigned n, unsigned k)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned tid = threadIdx.y * blockDim.x + threadIdx.x;
    const unsigned warp = tid / 32, lane = tid % 32;
    const unsigned warp_m = warp / 4, warp_n = warp % 4;  // 2 x 4 warps: 64 rows x 32 columns each
    const unsigned block_n = blockIdx.x * BN, block_m = blockIdx.y * BM;
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    const unsigned slices = k / BK;

    int acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0;

    // Prologue: the first STAGES - 1 slices in flight (a group is committed even when empty, so
    // that wait_group counts slices).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if ((unsigned)s < slices) load_slice(base + s * STAGE_BYTES, a, b, m, n, k, block_m, block_n, s * BK, tid);
        cp_async_commit();
    }

    for (unsigned kt = 0; kt < slices; ++kt) {
        cp_async_wait<STAGES - 2>();  // slice kt has landed
        __syncthreads();              // ... for every thread, and slice kt - 1's stage is free
        const unsigned next = kt + STAGES - 1;
        if (next < slices) load_slice(base + (next % STAGES) * STAGE_BYTES, a, b, m, n, k, block_m, block_n, next * BK, tid);
        cp_async_commit();

        const unsigned a_stage = base + (kt % STAGES) * STAGE_BYTES, b_stage = a_stage + TILE_BYTES;
#pragma unroll
        for (unsigned kk = 0; kk < BK / 32; ++kk) {
            unsigned af[4][4], bf[4][2];
#pragma unroll
            for (unsigned mi = 0; mi < 4; ++mi) {
                // lanes 0-15: rows 0-15 at k 0-15; lanes 16-31: rows 0-15 at k 16-31 (a0..a3 of mma)
                const unsigned row = warp_m * 64 + mi * 16 + (lane % 16), chunk = kk * 2 + lane / 16;
                ldmatrix_x4(a_stage + swizzled(row, chunk), af[mi][0], af[mi][1], af[mi][2], af[mi][3]);
            }
#pragma unroll
            for (unsigned nj = 0; nj < 2; ++nj) {
                // matrices: (cols 0-7, k 0-15), (cols 0-7, k 16-31), (cols 8-15, k 0-15), (cols 8-15, k 16-31)
                const unsigned q = lane / 8;
                const unsigned row = warp_n * 32 + nj * 16 + (q / 2) * 8 + lane % 8, chunk = kk * 2 + q % 2;
                ldmatrix_x4(b_stage + swizzled(row, chunk), bf[2 * nj][0], bf[2 * nj][1], bf[2 * nj + 1][0],
                            bf[2 * nj + 1][1]);
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) mma_s8(acc[mi][ni], af[mi], bf[ni]);
        }
    }
    cp_async_wait<0>();

    // Epilogue: c0, c1 at (lane / 4, 2 (lane % 4) + {0, 1}) of each 16 x 8 tile, c2, c3 eight rows
    // below; each exact int32 sum scaled in fp32 by its token's and its channel's scale.
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
        const unsigned col = block_n + warp_n * 32 + ni * 8 + (lane % 4) * 2;
        const float sb0 = col < n ? b_scale[col] : 0.0f, sb1 = col + 1 < n ? b_scale[col + 1] : 0.0f;
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const unsigned row = block_m + warp_m * 64 + mi * 16 + lane / 4 + half * 8;
                if (row >= m) continue;
                const float sa = a_scale[row];
                const float v0 = sa * sb0 * (float)acc[mi][ni][2 * half], v1 = sa * sb1 * (float)acc[mi][ni][2 * half + 1];
                __nv_bfloat16* dst = c + (size_t)row * n + col;
                if (col + 1 < n && (n % 2) == 0) {
                    *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(v0, v1);
                } else {
                    if (col < n) dst[0] = __float2bfloat16_rn(v0);
                    if (col + 1 < n) dst[1] = __float2bfloat16_rn(v1);
                }
            }
    }
}
