// gradshaf best-known kernels for the H200 (sm_90): per Picard step, a multi-block max
// reduction of psi over the interior (gradshaf_axis_reduce) and a weighted-Jacobi update with the
// normalised source term (gradshaf_step).
//
// WHAT MADE IT FAST
// - Reduction: RG blocks (3 per SM, 1536 threads) instead of one block: every warp takes (row, 512-float
//   segment) units round-robin, each lane issuing 4 independent aligned float4 loads per unit
//   (rows of odd width are not 16-byte aligned, so the aligned float4s that cover a row's
//   interior are loaded and the elements outside [row*nr+1, row*nr+nr-1) -- the boundary
//   columns and the neighbouring rows -- are masked to -inf). Warp shuffles then shared memory
//   give the block maximum; the blocks are combined in the SAME launch by the last-block-done
//   pattern (partials in module-scope __device__ scratch, __threadfence, atomicAdd on a counter;
//   the last block reduces the partials through L2 (__ldcg), writes psi_axis[0] and resets the
//   counter to 0 for the next launch). psi_axis needs no clearing: it is only written once.
// - Update: a thread owns one column i and PY consecutive rows; all PY+2 rows are loaded up front
//   into registers (y-neighbours are registers, only 2 halo rows per PY re-read from L1/L2),
//   x-neighbours by warp shuffle (lanes 0/31 load one float). Coalesced 4-byte accesses (a warp
//   = 128 contiguous bytes per row; rows are not 16-byte aligned) with 72 B in flight per thread.
//   Everything that depends only on the column (R, aW, aE, the divisions) is computed once per
//   thread, not per cell; psin keeps the exact division.
// - Cache-friendly sweep order: the reduction walks the rows upwards, the update walks them
//   downwards (reversed blockIdx.y), so each launch starts on the rows the previous launch
//   touched last, still in the 60 MB L2 (a 4097^2 field is 67 MB): part of the 12 B/cell model
//   is served from L2.
// Expected: ~0.85-0.95 of the 4325 GB/s ceiling at 4097^2..8193x4097 (two streaming passes,
// a few us of launch/combine overhead per step; L2 reuse between the passes offsets it).
// kevo: tune RB 512 256 1024
// kevo: tune RG 396 264 528 132
// kevo: launch gradshaf_axis_reduce block=RB grid=RG
// kevo: tune BY 4 8 2
// kevo: tune PY 16 8
// kevo: launch gradshaf_step block=32,BY per_thread=1,PY
#ifndef RB
#define RB 512
#endif
#ifndef RG
#define RG 396
#endif
#ifndef BY
#define BY 4
#endif
#ifndef PY
#define PY 16
#endif
#define MAX_PARTIALS 2048
#if RG > MAX_PARTIALS
#error "RG exceeds the partials scratch"
#endif

// Scratch shared by the blocks of one reduction launch; the counter returns to 0 at its end.
__device__ float g_partial[MAX_PARTIALS];
__device__ unsigned int g_count = 0;

__device__ __forceinline__ float warp_max(float m)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    return m;
}

// Block-wide max; the result is valid in every thread.
__device__ __forceinline__ float block_max(float m, float* s_warp)
{
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nw = (blockDim.x + 31u) >> 5;
    m = warp_max(m);
    __syncthreads();  // s_warp may still be read from an earlier call
    if (lane == 0u) s_warp[warp] = m;
    __syncthreads();
    m = lane < nw ? s_warp[lane] : __int_as_float(0xff800000);
    return warp_max(m);
}

extern "C" __global__ void __launch_bounds__(RB, 1536 / RB) gradshaf_axis_reduce(const float* __restrict__ psi, float* psi_axis, unsigned nr, unsigned nz)
{
    __shared__ float s_warp[32];
    __shared__ bool s_last;
    const float NEG_INF = __int_as_float(0xff800000);
    const unsigned lane = threadIdx.x & 31u;
    const unsigned gwarp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned nwarps = (gridDim.x * blockDim.x) >> 5;
    const float4* __restrict__ psi4 = reinterpret_cast<const float4*>(psi);

    float m = NEG_INF;
    if (nz >= 3u && nr >= 3u) {
        const unsigned upr = ((nr >> 2) + 2u + 127u) >> 7;  // 128-float4 units per row
        const unsigned units = (nz - 2u) * upr;
        for (unsigned u = gwarp; u < units; u += nwarps) {  // warp-uniform
            const unsigned row = 1u + u / upr, seg = u - (row - 1u) * upr;
            const unsigned lo = row * nr + 1u, hi = row * nr + nr - 1u;  // interior: [lo, hi)
            const unsigned qs = (lo >> 2) + seg * 128u;
            const unsigned qe = min(qs + 128u, (hi + 3u) >> 2);
            float4 v[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const unsigned q = qs + lane + 32u * k;
                if (q < qe) v[k] = __ldg(psi4 + q);
            }
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const unsigned q = qs + lane + 32u * k;
                if (q < qe) {
                    const unsigned f = 4u * q;
                    if (f >= lo && f + 4u <= hi) {
                        m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
                    } else {  // first/last float4 of the row: mask what is not interior
                        if (f + 0u >= lo && f + 0u < hi) m = fmaxf(m, v[k].x);
                        if (f + 1u >= lo && f + 1u < hi) m = fmaxf(m, v[k].y);
                        if (f + 2u >= lo && f + 2u < hi) m = fmaxf(m, v[k].z);
                        if (f + 3u >= lo && f + 3u < hi) m = fmaxf(m, v[k].w);
                    }
                }
            }
        }
    }
    m = block_max(m, s_warp);

    // Last-block-done: publish this block's maximum, count the finished blocks; the last one
    // combines all partials and writes the result.
    if (threadIdx.x == 0) {
        g_partial[blockIdx.x] = m;
        __threadfence();
        const unsigned done = atomicAdd(&g_count, 1u);
        s_last = done == gridDim.x - 1u;
    }
    __syncthreads();
    if (!s_last) return;  // block-uniform
    __threadfence();
    float t = NEG_INF;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) t = fmaxf(t, __ldcg(&g_partial[b]));
    t = block_max(t, s_warp);
    if (threadIdx.x == 0) {
        psi_axis[0] = t;
        g_count = 0u;  // ready for the next launch (launches are stream-ordered)
    }
}

extern "C" __global__ void __launch_bounds__(32 * BY) gradshaf_step(const float* __restrict__ psi_in, float* __restrict__ psi_out, const float* __restrict__ psi_axis, unsigned nr, unsigned nz, float rmin, float dr, float dz, float p_axis, float mu0, float omega)
{
    const unsigned lane = threadIdx.x & 31u;  // blockDim.x == 32: a warp is one row segment
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned by = gridDim.y - 1u - blockIdx.y;  // rows top-down: start where the reduction ended
    const unsigned j0 = (by * blockDim.y + threadIdx.y) * PY;
    if (j0 >= nz) return;  // whole warp
    const bool act = i < nr;
    const bool icol = i >= 1u && i + 1u < nr;  // interior column

    // Rows j0-1 .. j0+PY, all loads issued up front.
    float r[PY + 2];
#pragma unroll
    for (int k = 0; k < PY + 2; ++k) {
        const unsigned jj = j0 + k - 1u;  // wraps for j0 == 0, k == 0
        r[k] = 0.0f;
        if (act && jj < nz) r[k] = __ldg(psi_in + (size_t)jj * nr + i);
    }
    const float axis = __ldg(psi_axis);

    // Column constants (R depends on i only).
    const float R = rmin + (float)i * dr;
    const float inv_dr2 = 1.0f / (dr * dr);
    const float inv_dz2 = 1.0f / (dz * dz);
    const float half = 1.0f / (2.0f * R * dr);
    const float a_w = inv_dr2 + half;
    const float a_e = inv_dr2 - half;
    const float a_c = -2.0f * inv_dr2 - 2.0f * inv_dz2;
    const float w_c = omega / a_c;
    const float src = -mu0 * R * (R * p_axis * 4.0f);  // rhs = src * psin * (1 - psin)

#pragma unroll
    for (int k = 0; k < PY; ++k) {
        const unsigned j = j0 + k;
        if (j >= nz) break;  // warp-uniform
        const size_t row = (size_t)j * nr;
        const float c = r[k + 1];
        float west = __shfl_up_sync(0xffffffffu, c, 1);
        float east = __shfl_down_sync(0xffffffffu, c, 1);
        if (lane == 0u && act && i >= 1u) west = __ldg(psi_in + row + i - 1u);
        if (lane == 31u && i + 1u < nr) east = __ldg(psi_in + row + i + 1u);
        if (act) {
            float o = c;  // boundary copies
            if (icol && j >= 1u && j + 1u < nz) {
                const float psin = c / axis;
                const float rhs = (psin > 0.0f && psin < 1.0f) ? src * psin * (1.0f - psin) : 0.0f;
                const float lpsi = a_w * west + a_e * east + inv_dz2 * (r[k + 2] + r[k]) + a_c * c;
                o = c + w_c * (rhs - lpsi);
            }
            psi_out[row + i] = o;
        }
    }
}
