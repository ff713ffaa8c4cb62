// gradshaf best-known OpenCL kernels: an OpenCL C 1.2 port of best.cu's default paths (RV=0,
// UV=0). Per Picard step, a max reduction of psi over the interior (gradshaf_axis_reduce) and a
// weighted-Jacobi update with the normalised source term (gradshaf_step).
//
// WHAT MAKES IT FAST
// - Reduction: best.cu's unit structure. The work-items form virtual warps of 32 that take
//   (row, segment of 32*RU float4) units round-robin; each work-item issues RU independent
//   aligned vload4 loads before it reduces them (rows of odd width are not 16-byte aligned, so
//   the aligned float4s that cover a row's interior are loaded and the elements outside
//   [row*nr+1, row*nr+nr-1) -- the boundary columns and the neighbouring rows -- are masked,
//   only in a row's first and last float4). The maxima then meet in a local-memory tree.
//   DIFFERENCE FROM best.cu: best.cu combines many blocks in one launch by the last-block-done
//   pattern, with partials and a counter in module-scope __device__ scratch. OpenCL C 1.2 has no
//   program-scope writable variables, psi must not be written and psi_axis (one float, never
//   cleared) cannot serve as a counter, so the reduction runs as ONE large work-group
//   (grid=1, RB work-items, as the seed's structure), with many loads in flight per work-item.
//   On a GPU this uses one compute unit, so expect the reduction to cost far more than in best.cu.
// - Update: a work-item owns one column i and PY consecutive rows; all PY+2 rows are loaded up
//   front into registers (y-neighbours are registers, only 2 halo rows per PY re-read from
//   cache). x-neighbours come through local memory (best.cu used warp shuffles): each work-item
//   stores its PY centre values in a [row][BX+2] tile, the two edge work-items of a row segment
//   load the west/east halo column, one barrier. Coalesced 4-byte accesses (rows are not 16-byte
//   aligned). Everything that depends only on the column (R, aW, aE, the divisions) is computed
//   once per work-item, and so is 1/psi_axis: psin = psi * (1/psi_axis), an ulp from the exact
//   division (far inside the tolerance).
// - Cache-friendly sweep order: the reduction walks the rows upwards, the update walks them
//   downwards (reversed group id along y), so each launch starts on the rows the previous launch
//   touched last.
// Left out: best.cu's alternative paths RV=1 (flat reduction) and UV=1 (float4 update), neither
// measurably faster on the H200.
//
// CHECKED with the snapshot binary on PoCL (CPU, 2 cores), verdict ok at every size, held-out
// included:  kevo eval gradshaf tasks/gradshaf/best.cl --backend opencl --sizes all --check-only
//   --profile small  48x40x20, 65x49x25, 96x80x20, held-out 72x56x25
//   --profile paper  65^2x30, 257^2x40, 513^2x30, held-out 129^2x35
//   --profile large  4097^2x20, 8193x4097x10, 6145^2x10, held-out 5121x3073x15
// and at the small profile with -D: RB=256 RU=8; RB=512 RU=8 BX=64 BY=8 PY=16; BX=64 BY=2 PY=4;
// BY=8 PY=8; BY=2 PY=16 RU=8; BX=64 BY=4 PY=8 RB=256: all ok.
// Timed only on PoCL (CPU), paper profile, median per size: seed 0.89 / 23.0 / 71.3 / 7.7 ms,
// this file 1.87 / 24.8 / 71.1 / 8.6 ms (no gain on a CPU). NOT TIMED ON A GPU.
// kevo: tune RB 1024 512 256
// kevo: tune RU 4 8
// kevo: launch gradshaf_axis_reduce block=RB grid=1
// kevo: tune BX 32 64
// kevo: tune BY 4 8 2
// kevo: tune PY 16 8 4
// kevo: launch gradshaf_step block=BX,BY per_thread=1,PY
#ifndef RB
#define RB 1024
#endif
#ifndef RU
#define RU 4
#endif
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 4
#endif
#ifndef PY
#define PY 16
#endif
#define VW 32             // work-items per virtual warp of the reduction (index arithmetic only)
#define SEG (VW * RU)     // float4s per reduction unit

// psi_axis[0] = max of psi over the interior (0 < i < nr-1, 0 < j < nz-1). One work-group of RB
// work-items (RB a power of two); a larger global size would only repeat the work.
__kernel __attribute__((reqd_work_group_size(RB, 1, 1))) void gradshaf_axis_reduce(__global const float* restrict psi, __global float* restrict psi_axis, uint nr, uint nz)
{
    __local float partial[RB];
    const uint t = (uint)get_local_id(0);
    const uint lane = t % VW, vw = t / VW, nvw = RB / VW;
    float m = -INFINITY;
    if (nz >= 3u && nr >= 3u) {
        const uint upr = ((nr >> 2) + 2u + SEG - 1u) / SEG;  // units per row
        const uint units = (nz - 2u) * upr;
        for (uint u = vw; u < units; u += nvw) {
            const uint row = 1u + u / upr, seg = u - (row - 1u) * upr;
            const uint lo = row * nr + 1u, hi = row * nr + nr - 1u;  // interior: [lo, hi)
            const uint qs = (lo >> 2) + seg * SEG;
            const uint qe = min(qs + SEG, (hi + 3u) >> 2);  // the last float4 stays inside row nz-1
            float4 v[RU];
#pragma unroll
            for (int k = 0; k < RU; ++k) {
                const uint q = qs + lane + VW * k;
                v[k] = q < qe ? vload4(q, psi) : (float4)(-INFINITY);
            }
#pragma unroll
            for (int k = 0; k < RU; ++k) {
                const uint q = qs + lane + VW * k;
                const uint f = 4u * q;
                if (q < qe) {
                    if (f >= lo && f + 4u <= hi) {
                        m = fmax(m, fmax(fmax(v[k].x, v[k].y), fmax(v[k].z, v[k].w)));
                    } else {  // first/last float4 of the row: mask what is not interior
                        if (f + 0u >= lo && f + 0u < hi) m = fmax(m, v[k].x);
                        if (f + 1u >= lo && f + 1u < hi) m = fmax(m, v[k].y);
                        if (f + 2u >= lo && f + 2u < hi) m = fmax(m, v[k].z);
                        if (f + 3u >= lo && f + 3u < hi) m = fmax(m, v[k].w);
                    }
                }
            }
        }
    }
    partial[t] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = RB / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] = fmax(partial[t], partial[t + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0 && get_group_id(0) == 0) psi_axis[0] = partial[0];
}

__kernel __attribute__((reqd_work_group_size(BX, BY, 1))) void gradshaf_step(__global const float* restrict psi_in, __global float* restrict psi_out, __global const float* restrict psi_axis, uint nr, uint nz, float rmin, float dr, float dz, float p_axis, float mu0, float omega)
{
    __local float tile[BY * PY * (BX + 2)];  // [ty][k][1 + tx], halo columns 0 and BX+1
    const uint tx = (uint)get_local_id(0), ty = (uint)get_local_id(1);
    const uint i = (uint)get_group_id(0) * BX + tx;
    const uint by = (uint)get_num_groups(1) - 1u - (uint)get_group_id(1);  // rows top-down
    const uint j0 = (by * BY + ty) * PY;
    const bool act = i < nr;
    const bool icol = i >= 1u && i + 1u < nr;  // interior column
    __local float* trow = tile + ty * PY * (BX + 2);

    // Rows j0-1 .. j0+PY, all loads issued up front (none if the work-item is past the field).
    float r[PY + 2];
#pragma unroll
    for (int k = 0; k < PY + 2; ++k) {
        const uint jj = j0 + (uint)k - 1u;  // wraps for j0 == 0, k == 0
        r[k] = 0.0f;
        if (act && jj < nz) r[k] = psi_in[(size_t)jj * nr + i];
    }
    // Halo columns of the row segment: the edge work-items load them.
    float h[PY];
    const bool west = tx == 0u && act && i >= 1u;
    const bool east = tx == BX - 1u && i + 1u < nr;
    const uint ih = tx == 0u ? i - 1u : i + 1u;
#pragma unroll
    for (int k = 0; k < PY; ++k) {
        const uint j = j0 + (uint)k;
        h[k] = 0.0f;
        if ((west || east) && j < nz) h[k] = psi_in[(size_t)j * nr + ih];
    }
    const float inv_axis = 1.0f / psi_axis[0];
#pragma unroll
    for (int k = 0; k < PY; ++k) {
        trow[k * (BX + 2) + tx + 1u] = r[k + 1];
        if (west) trow[k * (BX + 2)] = h[k];
        if (east) trow[k * (BX + 2) + BX + 1u] = h[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!act) return;  // after the only barrier

    // Column constants (R depends on i only).
    const float R = rmin + (float)i * dr;
    const float inv_dr2 = 1.0f / (dr * dr);
    const float inv_dz2 = 1.0f / (dz * dz);
    const float hr = 1.0f / (2.0f * R * dr);
    const float a_w = inv_dr2 + hr;
    const float a_e = inv_dr2 - hr;
    const float a_c = -2.0f * inv_dr2 - 2.0f * inv_dz2;
    const float w_c = omega / a_c;
    const float src = -mu0 * R * (R * p_axis * 4.0f);  // rhs = src * psin * (1 - psin)

#pragma unroll
    for (int k = 0; k < PY; ++k) {
        const uint j = j0 + (uint)k;
        if (j >= nz) break;
        const float c = r[k + 1];
        float o = c;  // boundary copies
        if (icol && j >= 1u && j + 1u < nz) {
            const float wv = trow[k * (BX + 2) + tx];
            const float ev = trow[k * (BX + 2) + tx + 2u];
            const float psin = c * inv_axis;
            const float rhs = (psin > 0.0f && psin < 1.0f) ? src * psin * (1.0f - psin) : 0.0f;
            const float lpsi = a_w * wv + a_e * ev + inv_dz2 * (r[k + 2] + r[k]) + a_c * c;
            o = c + w_c * (rhs - lpsi);
        }
        psi_out[(size_t)j * nr + i] = o;
    }
}
