// gemm_w4a16 best-known CUDA kernel: bf16 tensor cores (mma.sync m16n8k16, fp32 accumulate) on
// weights that stay int4 in memory. What makes it fast:
// - The int4 weights, which are almost all of the bytes at decode M, are read once, as one 16-byte
//   load per thread per group of 128 and per 8 output columns, and unpacked in registers: a nibble
//   pair becomes a bf16 pair by bit tricks (0x4300 | (nibble ^ 8) is the bf16 value 136 + q, then
//   one bf16x2 subtraction of 136; exact, q is a small integer).
// - The k order inside a group is permuted so that each thread's 16 weight bytes are contiguous:
//   the MMA's B fragment wants k = 2t, 2t+1, 2t+8, 2t+9 of each 16-k step; thread t instead takes
//   physical k = 32t + 4s + {0, 1} and {2, 3} at step s, and builds its A fragment from the same
//   physical k (a dot product does not care about the order), so A is also read as 64
//   contiguous bytes per row and group.
// - One MMA partial per group of 128, scaled by that group's bf16 scale in fp32 and added to an
//   fp32 accumulator: the weights enter the MMA as exact integers, and the scale is applied once
//   per group, never rounded into a bf16 operand.
// - Split-K across the 8 warps of a CTA (warp w takes groups w, w+8, ...), then a reduction in
//   shared memory: a CTA covers 16 rows x 16 columns, so even M = 1 launches N / 16 CTAs, enough
//   to keep the H200's memory busy without a workspace or atomics.
// Rows of A beyond M are read as zeros (decode M = 1 uses one row of the m16 tile). N and K are
// multiples of 128, so column tiles and 16-byte loads never straddle a row or the buffers' ends.
// The launch is block=16,16 over the (N, M) domain: the grid is (N / 16, ceil(M / 16)).
// What is left for the prefill shapes (M in the thousands): larger M tiles per CTA so that each
// unpacked weight feeds more rows, operands staged through shared memory (cp.async), or wgmma.
// kevo: launch gemm_w4a16 block=16,16
#include <cuda_bf16.h>

#define WARPS 8
#define NT 2        // n8 tiles per CTA: 16 columns
#define BN (8 * NT)
#define BM 16

__device__ __forceinline__ void mma_bf16(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                         unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The byte at `shift` of `word` (two int4, low nibble first) as a bf16 pair, the low nibble in the
// low half: 0x4300 | u is bf16 128 + u, u = nibble ^ 8 = q + 8, so subtracting 136 leaves q exactly.
__device__ __forceinline__ unsigned int4_pair_to_bf16x2(unsigned word, unsigned shift)
{
    const unsigned t = word >> shift;
    unsigned r = ((t & 0xFu) | ((t << 12) & 0xF0000u)) ^ 0x43084308u;
    __nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162*>(&r);
    v = __hsub2(v, __floats2bfloat162_rn(136.0f, 136.0f));
    return *reinterpret_cast<unsigned*>(&v);
}

__device__ __forceinline__ unsigned word_of(const uint4& v, unsigned i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

extern "C" __global__ void gemm_w4a16(const __nv_bfloat16* a, const unsigned char* b, const __nv_bfloat16* scales, __nv_bfloat16* c, unsigned m, unsigned n, unsigned k)
{
    __shared__ float partial[WARPS][BM][BN];
    const unsigned tid = threadIdx.x + blockDim.x * threadIdx.y;
    const unsigned warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const unsigned m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const unsigned groups = k / 128;
    const bool row_lo = m0 + g < m, row_hi = m0 + g + 8 < m;
    const uint4* a_lo = reinterpret_cast<const uint4*>(a + (size_t)(row_lo ? m0 + g : 0) * k);
    const uint4* a_hi = reinterpret_cast<const uint4*>(a + (size_t)(row_hi ? m0 + g + 8 : 0) * k);

    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[j][r] = 0.0f;

    for (unsigned grp = warp; grp < groups; grp += WARPS) {
        // A: 32 bf16 (k = 32t .. 32t+31 of the group) of rows g and g + 8: 16 words each.
        uint4 al[4], ah[4];
        const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            al[v] = row_lo ? __ldg(a_lo + grp * 16 + t * 4 + v) : zero;
            ah[v] = row_hi ? __ldg(a_hi + grp * 16 + t * 4 + v) : zero;
        }
        // B: 16 bytes (k = 32t .. 32t+31) of column n0 + 8j + g, per n8 tile.
        uint4 bq[NT];
#pragma unroll
        for (int j = 0; j < NT; ++j)
            bq[j] = __ldg(reinterpret_cast<const uint4*>(b + (size_t)(n0 + 8 * j + g) * (k / 2) + grp * 64) + t);

        float p[NT][4];
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) p[j][r] = 0.0f;
#pragma unroll
        for (unsigned s = 0; s < 8; ++s) {
            // Physical k = 32t + 4s + {0, 1} (words 2s) and + {2, 3} (word 2s + 1).
            const unsigned a0 = word_of(al[s / 2], (2 * s) % 4), a2 = word_of(al[s / 2], (2 * s + 1) % 4);
            const unsigned a1 = word_of(ah[s / 2], (2 * s) % 4), a3 = word_of(ah[s / 2], (2 * s + 1) % 4);
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                // Bytes 2s and 2s + 1 of the thread's 16: word s / 2, bit shifts 16 (s % 2) and + 8.
                const unsigned w = word_of(bq[j], s / 2);
                const unsigned b0 = int4_pair_to_bf16x2(w, 16 * (s % 2));
                const unsigned b1 = int4_pair_to_bf16x2(w, 16 * (s % 2) + 8);
                mma_bf16(p[j], a0, a1, a2, a3, b0, b1);
            }
        }
        // C fragment: p[j][0..1] row g, columns 8j + 2t + {0, 1}; p[j][2..3] row g + 8, same columns.
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const unsigned col = n0 + 8 * j + 2 * t;
            const float s0 = __bfloat162float(scales[(size_t)col * groups + grp]);
            const float s1 = __bfloat162float(scales[(size_t)(col + 1) * groups + grp]);
            acc[j][0] += p[j][0] * s0;
            acc[j][1] += p[j][1] * s1;
            acc[j][2] += p[j][2] * s0;
            acc[j][3] += p[j][3] * s1;
        }
    }

#pragma unroll
    for (int j = 0; j < NT; ++j) {
        partial[warp][g][8 * j + 2 * t] = acc[j][0];
        partial[warp][g][8 * j + 2 * t + 1] = acc[j][1];
        partial[warp][g + 8][8 * j + 2 * t] = acc[j][2];
        partial[warp][g + 8][8 * j + 2 * t + 1] = acc[j][3];
    }
    __syncthreads();
    // 256 threads, 16 x 16 outputs: one each, the warps' partials summed in a fixed order.
    for (unsigned e = tid; e < BM * BN; e += blockDim.x * blockDim.y) {
        const unsigned row = e / BN, col = e % BN;
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += partial[w][row][col];
        if (m0 + row < m && n0 + col < n) c[(size_t)(m0 + row) * n + n0 + col] = __float2bfloat16_rn(sum);
    }
}
