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
//   thread, not per cell, and so is 1/psi_axis: psin = psi * (1/psi_axis), an ulp from the exact
//   division (far inside the tolerance).
// - Cache-friendly sweep order: the reduction walks the rows upwards, the update walks them
//   downwards (reversed blockIdx.y), so each launch starts on the rows the previous launch
//   touched last, still in the 60 MB L2 (a 4097^2 field is 67 MB): part of the 12 B/cell model
//   is served from L2.
// Measured on the H200 (large profile, fraction of the measured 4305 GB/s static ceiling):
// 0.677-0.737 (held-out 5121x3073x15: 0.677), below the ~0.85-0.95 estimate because of the
// update. Nsight Compute at 5121x3073, before the update lost its per-cell division: reduction
// 19.4 us at 70% of DRAM peak, update 48.3 us at 47% of DRAM with 71% SM busy and 79% L2
// throughput (issue-bound; unaligned 4-byte row loads: a warp's 128-byte row access touches two
// lines). Removing the division took the held-out size from 0.635 to 0.677.
//
// ALTERNATIVE PATHS (A/B knobs; the defaults select the paths described above)
// - RV=1: flat reduction. The float4s that cover rows 1..nz-2 form ONE flat range; every thread
//   issues RU independent float4 loads (grid stride T = all threads) before it reduces them, so
//   RU*16 B per thread are in flight, no per-row units and no partial units. The (i, j) of each
//   float4 is tracked incrementally (one division per RU loads); a float4 is masked element by
//   element only where it touches a boundary column or a boundary row. RMB sets the launch-bounds
//   min-blocks (0 = 1536/RB, as the default path): RU=16 needs RMB=2 (or RB=256 RMB=4) to avoid
//   spills.
// - UV=1: float4 update. The field is read as ONE flat array of aligned float4s cut into
//   "pseudo-rows" of M = nr/4 float4s (4M = nr - s floats, s = nr % 4): the float4 one pseudo-row
//   below starts nr - s floats later, so a cell's north neighbours are elements s..s+3 of the
//   pair (float4 below, its right neighbour) and its south neighbours elements 4-s.. of (left
//   neighbour of the float4 above, float4 above) -- register selects, no unaligned loads.
//   A thread owns one float4 column of PY pseudo-rows (PY+2 aligned 16-B loads up front);
//   left/right float4s come by warp shuffle; lanes 0 and 31 only load (halo lanes), so a warp
//   outputs 30 float4s. Cell (i, j) is tracked incrementally; per-cell R terms use one division.
//   PX=3 sizes the host grid to the 30-wide warps (with PX=1 the extra blocks exit at once).
// Neither RV=1 nor UV=1 measured clearly better (held-out 5121x3073x15, before the division's
// removal): default 0.633, RV=1 (RU=8 RMB=2 RG=264) 0.629, UV=1 (PX=3 PY=4 BY=8) 0.643, both 0.640.
// kevo: tune RB 512 256 1024
// kevo: tune RG 396 264 528 132
// kevo: tune RV 0 1
// kevo: tune RU 8 16 4
// kevo: tune RMB 0 2 1 4
// kevo: launch gradshaf_axis_reduce block=RB grid=RG
// kevo: tune BY 4 8 2
// kevo: tune PY 16 8 4
// kevo: tune UV 0 1
// kevo: tune PX 1 3
// kevo: launch gradshaf_step block=32,BY per_thread=PX,PY
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
#ifndef RV
#define RV 0
#endif
#ifndef RU
#define RU 8
#endif
#ifndef RMB
#define RMB 0
#endif
#ifndef UV
#define UV 0
#endif
#ifndef PX
#define PX 1
#endif
#if RMB > 0
#define RED_MINB RMB
#else
#define RED_MINB (1536 / RB)
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

// Whether the cell e floats after cell (i, j) is interior; i < nr and nr >= 3, so at most one wrap.
__device__ __forceinline__ bool interior_at(unsigned i, unsigned j, unsigned e, unsigned nr, unsigned nz)
{
    unsigned ii = i + e, jj = j;
    if (ii >= nr) { ii -= nr; ++jj; }
    return ii >= 1u && ii + 2u <= nr && jj >= 1u && jj + 2u <= nz;
}

extern "C" __global__ void __launch_bounds__(RB, RED_MINB) gradshaf_axis_reduce(const float* __restrict__ psi, float* psi_axis, unsigned nr, unsigned nz)
{
    __shared__ float s_warp[32];
    __shared__ bool s_last;
    const float NEG_INF = __int_as_float(0xff800000);
    const float4* __restrict__ psi4 = reinterpret_cast<const float4*>(psi);

    float m = NEG_INF;
#if RV == 1
    if (nz >= 3u && nr >= 3u) {
        // Flat range: the float4s covering floats [nr, (nz-1)*nr) (rows 1..nz-2); the last one ends
        // at most 3 floats past that range, still inside the field (row nz-1 has nr >= 3 floats).
        const unsigned T = gridDim.x * blockDim.x;
        const unsigned gtid = blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned qbeg = nr >> 2, qend = ((nz - 1u) * nr + 3u) >> 2;
        const unsigned sj = (4u * T) / nr, si = 4u * T - sj * nr;  // (i, j) step between loads
        for (unsigned q0 = qbeg + gtid; q0 < qend; q0 += RU * T) {
            float4 v[RU];
#pragma unroll
            for (int k = 0; k < RU; ++k) {
                const unsigned q = q0 + (unsigned)k * T;
                if (q < qend) v[k] = __ldg(psi4 + q);
            }
            unsigned j = (4u * q0) / nr;
            unsigned i = 4u * q0 - j * nr;  // cell (i, j) of element 0 of float4 q
#pragma unroll
            for (int k = 0; k < RU; ++k) {
                const unsigned q = q0 + (unsigned)k * T;
                if (q < qend) {
                    if (i >= 1u && i + 5u <= nr && j >= 1u && j + 2u <= nz) {
                        m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
                    } else {  // touches a boundary column or row: mask element by element
                        m = fmaxf(m, interior_at(i, j, 0u, nr, nz) ? v[k].x : NEG_INF);
                        m = fmaxf(m, interior_at(i, j, 1u, nr, nz) ? v[k].y : NEG_INF);
                        m = fmaxf(m, interior_at(i, j, 2u, nr, nz) ? v[k].z : NEG_INF);
                        m = fmaxf(m, interior_at(i, j, 3u, nr, nz) ? v[k].w : NEG_INF);
                    }
                }
                i += si;
                j += sj;
                if (i >= nr) { i -= nr; ++j; }
            }
        }
    }
#else
    const unsigned lane = threadIdx.x & 31u;
    const unsigned gwarp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned nwarps = (gridDim.x * blockDim.x) >> 5;
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
#endif
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

// Default update path (UV=0): one column, PY rows per thread (see the header).
#if UV == 0
__device__ __forceinline__ void step_columns(const float* __restrict__ psi_in, float* __restrict__ psi_out, const float* __restrict__ psi_axis, unsigned nr, unsigned nz, float rmin, float dr, float dz, float p_axis, float mu0, float omega)
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
    // One division per thread: psin = c * (1/axis) differs from c / axis by about an ulp, far
    // inside the tolerance, and a per-cell IEEE division made the update issue-bound (Nsight
    // Compute on the H200: 71% SM busy, 47% of DRAM bandwidth, 48 us for a 5121x3073 step).
    const float inv_axis = 1.0f / __ldg(psi_axis);

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
                const float psin = c * inv_axis;
                const float rhs = (psin > 0.0f && psin < 1.0f) ? src * psin * (1.0f - psin) : 0.0f;
                const float lpsi = a_w * west + a_e * east + inv_dz2 * (r[k + 2] + r[k]) + a_c * c;
                o = c + w_c * (rhs - lpsi);
            }
            psi_out[row + i] = o;
        }
    }
}

#endif

#if UV == 1
// Elements s..s+3 of the 8-float concatenation (a, b), s = 0..3 (warp-uniform): register selects.
__device__ __forceinline__ float4 win4(float4 a, float4 b, unsigned s)
{
    float4 r;
    r.x = s == 0u ? a.x : s == 1u ? a.y : s == 2u ? a.z : a.w;
    r.y = s == 0u ? a.y : s == 1u ? a.z : s == 2u ? a.w : b.x;
    r.z = s == 0u ? a.z : s == 1u ? a.w : s == 2u ? b.x : b.y;
    r.w = s == 0u ? a.w : s == 1u ? b.x : s == 2u ? b.y : b.z;
    return r;
}
__device__ __forceinline__ float4 shfl_up4(float4 v)
{
    return make_float4(__shfl_up_sync(0xffffffffu, v.x, 1), __shfl_up_sync(0xffffffffu, v.y, 1),
                       __shfl_up_sync(0xffffffffu, v.z, 1), __shfl_up_sync(0xffffffffu, v.w, 1));
}
__device__ __forceinline__ float4 shfl_down4(float4 v)
{
    return make_float4(__shfl_down_sync(0xffffffffu, v.x, 1), __shfl_down_sync(0xffffffffu, v.y, 1),
                       __shfl_down_sync(0xffffffffu, v.z, 1), __shfl_down_sync(0xffffffffu, v.w, 1));
}
// Aligned float4 q of the flat field; zeros outside it, scalar loads for the last partial float4.
__device__ __forceinline__ float4 load_q(const float* __restrict__ p, int q, unsigned ncell)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (q < 0) return v;
    const unsigned f = 4u * (unsigned)q;
    if (f + 4u <= ncell) return __ldg(reinterpret_cast<const float4*>(p) + q);
    if (f + 0u < ncell) v.x = __ldg(p + f + 0u);
    if (f + 1u < ncell) v.y = __ldg(p + f + 1u);
    if (f + 2u < ncell) v.z = __ldg(p + f + 2u);
    return v;
}
#endif

extern "C" __global__ void __launch_bounds__(32 * BY) gradshaf_step(const float* __restrict__ psi_in, float* __restrict__ psi_out, const float* __restrict__ psi_axis, unsigned nr, unsigned nz, float rmin, float dr, float dz, float p_axis, float mu0, float omega)
{
#if UV == 1
    if (nr < 8u) {  // too narrow for pseudo-rows (not in any profile): plain per-cell loop
        const unsigned nthr = gridDim.x * gridDim.y * blockDim.x * blockDim.y;
        const unsigned tid = (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
        const float axis = __ldg(psi_axis);
        for (unsigned f = tid; f < nr * nz; f += nthr) {
            const unsigned j = f / nr, i = f - j * nr;
            const float c = __ldg(psi_in + f);
            float o = c;
            if (i >= 1u && i + 2u <= nr && j >= 1u && j + 2u <= nz) {
                const float R = rmin + (float)i * dr;
                const float inv_dr2 = 1.0f / (dr * dr), inv_dz2 = 1.0f / (dz * dz);
                const float half = 1.0f / (2.0f * R * dr);
                const float a_c = -2.0f * inv_dr2 - 2.0f * inv_dz2;
                const float psin = c / axis;
                const float rhs = (psin > 0.0f && psin < 1.0f) ? -mu0 * R * (R * p_axis * 4.0f * psin * (1.0f - psin)) : 0.0f;
                const float lpsi = (inv_dr2 + half) * __ldg(psi_in + f - 1u) + (inv_dr2 - half) * __ldg(psi_in + f + 1u) +
                                   inv_dz2 * (__ldg(psi_in + f - nr) + __ldg(psi_in + f + nr)) + a_c * c;
                o = c + omega / a_c * (rhs - lpsi);
            }
            psi_out[f] = o;
        }
        return;
    }
    const unsigned lane = threadIdx.x & 31u;
    const unsigned M = nr >> 2, s = nr & 3u;  // pseudo-row: M float4s = nr - s floats
    const unsigned ncell = nr * nz;
    const unsigned nq = (ncell + 3u) >> 2;
    const unsigned nprow = (nq + M - 1u) / M;
    const unsigned nband = (nprow + PY - 1u) / PY;
    const unsigned nxw = (M + 29u) / 30u;  // warp columns: 30 output lanes each
    const float inv_axis = 1.0f / __ldg(psi_axis);
    const float inv_dr2 = 1.0f / (dr * dr);
    const float inv_dz2 = 1.0f / (dz * dz);
    const float a_c = -2.0f * inv_dr2 - 2.0f * inv_dz2;
    const float w_c = omega / a_c;
    const float two_dr = 2.0f * dr;
    const float k_src = -mu0 * (p_axis * 4.0f);  // src = k_src * R * R
    float4* __restrict__ out4 = reinterpret_cast<float4*>(psi_out);

    for (unsigned xw = blockIdx.x; xw < nxw; xw += gridDim.x) {  // warp-uniform
        const int x = (int)(xw * 30u + lane) - 1;  // float4 column in the pseudo-row
        const bool out_lane = lane >= 1u && lane <= 30u && x < (int)M;
        for (unsigned band = (gridDim.y - 1u - blockIdx.y) * blockDim.y + threadIdx.y; band < nband;
             band += gridDim.y * blockDim.y) {  // warp-uniform; bands top-down first
            const int q0 = (int)(band * PY * M) + x;  // float4 of pseudo-row 0 of the band
            float4 P[PY + 2];  // pseudo-rows -1 .. PY
#pragma unroll
            for (int k = 0; k < PY + 2; ++k) P[k] = load_q(psi_in, q0 + (k - 1) * (int)M, ncell);

            const unsigned f0 = 4u * (unsigned)max(q0, 0);
            unsigned j = f0 / nr;
            int i = (int)(f0 - j * nr);  // cell of element 0 of the current float4
            float4 Uk = shfl_up4(P[0]);  // float4 left of the one above
            float4 Uc = shfl_up4(P[1]);  // left neighbour
            float4 Dc = shfl_down4(P[1]);  // right neighbour
#pragma unroll
            for (int k = 0; k < PY; ++k) {
                const float4 c = P[k + 1];
                const float4 Dn = shfl_down4(P[k + 2]);
                const float4 Un = shfl_up4(P[k + 2]);
                const float4 N = win4(P[k + 2], Dn, s);
                const float4 S = s == 0u ? P[k] : win4(Uk, P[k], 4u - s);
                const int q = q0 + k * (int)M;
                if (out_lane && 4u * (unsigned)q < ncell) {
                    const float cv[4] = {c.x, c.y, c.z, c.w};
                    const float wv[4] = {Uc.w, c.x, c.y, c.z};
                    const float ev[4] = {c.y, c.z, c.w, Dc.x};
                    const float nv[4] = {N.x, N.y, N.z, N.w};
                    const float sv[4] = {S.x, S.y, S.z, S.w};
                    float o[4];
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        unsigned ii = (unsigned)i + (unsigned)e, jj = j;
                        if (ii >= nr) { ii -= nr; ++jj; }  // nr >= 8: at most one wrap
                        o[e] = cv[e];  // boundary copies
                        if (ii >= 1u && ii + 2u <= nr && jj >= 1u && jj + 2u <= nz) {
                            const float R = rmin + (float)ii * dr;
                            const float half = __fdividef(1.0f, two_dr * R);  // ~2 ulp: negligible next to 1/dr^2
                            const float psin = cv[e] * inv_axis;
                            const float rhs = (psin > 0.0f && psin < 1.0f) ? k_src * R * R * psin * (1.0f - psin) : 0.0f;
                            const float lpsi = (inv_dr2 + half) * wv[e] + (inv_dr2 - half) * ev[e] + inv_dz2 * (nv[e] + sv[e]) + a_c * cv[e];
                            o[e] = cv[e] + w_c * (rhs - lpsi);
                        }
                    }
                    const unsigned f = 4u * (unsigned)q;
                    if (f + 4u <= ncell) {
                        out4[q] = make_float4(o[0], o[1], o[2], o[3]);
                    } else {
#pragma unroll
                        for (int e = 0; e < 3; ++e)
                            if (f + (unsigned)e < ncell) psi_out[f + (unsigned)e] = o[e];
                    }
                }
                Uk = Uc;
                Uc = Un;
                Dc = Dn;
                // Next pseudo-row starts nr - s floats later: one row down, s columns left.
                if (i >= (int)s) { i -= (int)s; ++j; } else { i += (int)nr - (int)s; }
            }
        }
    }
#else
    step_columns(psi_in, psi_out, psi_axis, nr, nz, rmin, dr, dz, p_axis, mu0, omega);
#endif
}
