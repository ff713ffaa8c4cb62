// gemm_fp8_block best-known CUDA kernel: fp8 tensor cores (mma.sync m16n8k32 e4m3 x e4m3, fp32
// accumulate; sm_89+) with DeepSeek-V3's per-block promotion. What makes it right and fast:
// - Each 128-wide K block is one MMA partial started from zero (4 MMAs of k32), then multiplied by
//   a_scale[m, kb] * b_scale[n / 128, kb] in fp32 and added to an fp32 accumulator: the tensor
//   core's reduced-precision adder (about 14 bits on Hopper) only ever sums 128 products, and the
//   scales are applied exactly where the recipe puts them.
// - The k order inside a block is permuted so that each thread reads its operands as contiguous
//   16-byte loads: the m16n8k32 fragments want k = 4t..4t+3 and 4t+16..4t+19 of each 32-k step;
//   thread t takes physical k = 32t + 8s + 0..3 and + 4..7 at step s, for A and B alike, so every
//   row's 32 bytes of the block are two uint4 loads (a dot product does not care about the order).
// - A warp computes a 32 x 32 tile (2 x 4 MMA tiles, each A and B fragment used four and two
//   times), and the 8 warps of a CTA split K (warp w takes blocks w, w+8, ...), reduced in shared
//   memory in a fixed order: decode M = 1 still launches N / 32 CTAs of 8 warps.
// Rows beyond M read as zeros with a zero scale. N and K are multiples of 128, so a CTA's 32
// columns lie in one 128-row block of B and share one b_scale per K block.
// The launch is block=32,8 per_thread=1,4 over the (N, M) domain: the grid is (N / 32, ceil(M / 32)).
// What is left for the prefill shapes: staging tiles through shared memory (cp.async, 128 x 128 CTA
// tiles) instead of each warp reading its operands from L2, or wgmma (sm_90a).
// kevo: launch gemm_fp8_block block=32,8 per_thread=1,4
#include <cuda_bf16.h>

#define WARPS 8
#define MT 2  // m16 tiles per warp
#define NT 4  // n8 tiles per warp
#define BM (16 * MT)
#define BN (8 * NT)

__device__ __forceinline__ void mma_e4m3(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                                         unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned word_of(const uint4& v, unsigned i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Word w (0..7) of a thread's 32 bytes held as two uint4.
__device__ __forceinline__ unsigned word8(const uint4 (&v)[2], unsigned w) { return word_of(v[w / 4], w % 4); }

extern "C" __global__ void gemm_fp8_block(const unsigned char* a, const float* a_scale, const unsigned char* b, const float* b_scale, __nv_bfloat16* c, unsigned m, unsigned n, unsigned k)
{
    __shared__ float partial[WARPS][BM][BN];
    const unsigned tid = threadIdx.x + blockDim.x * threadIdx.y;
    const unsigned warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const unsigned m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const unsigned blocks = k / 128;

    // The four A rows of this thread: m0 + 16i + g (h = 0) and + 8 (h = 1).
    bool valid[MT][2];
    const unsigned char* a_row[MT][2];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const unsigned row = m0 + 16 * i + 8 * h + g;
            valid[i][h] = row < m;
            a_row[i][h] = a + (size_t)(valid[i][h] ? row : 0) * k;
        }

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

    const uint4 zero = make_uint4(0, 0, 0, 0);
    for (unsigned kb = warp; kb < blocks; kb += WARPS) {
        const size_t offset = (size_t)kb * 128 + 32 * t;  // this thread's 32 bytes of the block
        uint4 av[MT][2][2], bv[NT][2];
        float as[MT][2];
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const uint4* p = reinterpret_cast<const uint4*>(a_row[i][h] + offset);
                av[i][h][0] = valid[i][h] ? __ldg(p) : zero;
                av[i][h][1] = valid[i][h] ? __ldg(p + 1) : zero;
                as[i][h] = valid[i][h] ? __ldg(a_scale + (size_t)(m0 + 16 * i + 8 * h + g) * blocks + kb) : 0.0f;
            }
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const uint4* p = reinterpret_cast<const uint4*>(b + (size_t)(n0 + 8 * j + g) * k + offset);
            bv[j][0] = __ldg(p);
            bv[j][1] = __ldg(p + 1);
        }
        const float bs = __ldg(b_scale + (size_t)(n0 / 128) * blocks + kb);

        float p[MT][NT][4];
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) p[i][j][r] = 0.0f;
#pragma unroll
        for (unsigned s = 0; s < 4; ++s)
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                // A fragment: row g (k 4t.. -> word 2s, k 4t+16.. -> word 2s+1), then row g + 8.
                const unsigned a0 = word8(av[i][0], 2 * s), a2 = word8(av[i][0], 2 * s + 1);
                const unsigned a1 = word8(av[i][1], 2 * s), a3 = word8(av[i][1], 2 * s + 1);
#pragma unroll
                for (int j = 0; j < NT; ++j) mma_e4m3(p[i][j], a0, a1, a2, a3, word8(bv[j], 2 * s), word8(bv[j], 2 * s + 1));
            }
        // Promote: C fragment rows g ([0], [1]) and g + 8 ([2], [3]).
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            const float s_lo = as[i][0] * bs, s_hi = as[i][1] * bs;
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                acc[i][j][0] += p[i][j][0] * s_lo;
                acc[i][j][1] += p[i][j][1] * s_lo;
                acc[i][j][2] += p[i][j][2] * s_hi;
                acc[i][j][3] += p[i][j][3] * s_hi;
            }
        }
    }

#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            partial[warp][16 * i + g][8 * j + 2 * t] = acc[i][j][0];
            partial[warp][16 * i + g][8 * j + 2 * t + 1] = acc[i][j][1];
            partial[warp][16 * i + g + 8][8 * j + 2 * t] = acc[i][j][2];
            partial[warp][16 * i + g + 8][8 * j + 2 * t + 1] = acc[i][j][3];
        }
    __syncthreads();
    for (unsigned e = tid; e < BM * BN; e += blockDim.x * blockDim.y) {
        const unsigned row = e / BN, col = e % BN;
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += partial[w][row][col];
        if (m0 + row < m && n0 + col < n) c[(size_t)(m0 + row) * n + n0 + col] = __float2bfloat16_rn(sum);
    }
}
