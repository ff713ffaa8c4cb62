// gradshaf best-known OpenCL kernels: an OpenCL C 1.2 port of best.cu's default paths (RV=0,
// UV=0) with a CPU path for PoCL. Per Picard step, a max reduction of psi over the interior
// (gradshaf_axis_reduce) and a weighted-Jacobi update with the normalised source term
// (gradshaf_step).
//
// WHAT MAKES IT FAST (the GPU path)
// - Reduction over RG work-groups of RB work-items (grid=RG): best.cu's unit structure. The
//   work-items form virtual warps of 32 that take (row, segment of 32*RU float4) units round-robin
//   over all groups; each work-item issues RU independent aligned vload4 loads before it reduces
//   them (rows of odd width are not 16-byte aligned, so the aligned float4s that cover a row's
//   interior are loaded and the elements outside [row*nr+1, row*nr+nr-1) -- the boundary columns
//   and the neighbouring rows -- are masked, only in a row's first and last float4). A
//   local-memory tree gives each group's maximum, which it writes to psi_axis[group].
//   DIFFERENCE FROM best.cu: best.cu combines its blocks in the same launch (last-block-done,
//   with module-scope __device__ scratch and an atomic counter). OpenCL C 1.2 has no writable
//   program-scope variables and no float atomics, so the groups leave their RG partial maxima in
//   the psi_axis scratch (the brief's "psi_axis scratch") and gradshaf_step combines them: every
//   work-item reads the RG partials (RG/4 aligned vload4, the same addresses across the group,
//   cache hits) before its first cell. RG=128 keeps 128 x 256 x 64 B = 2 MB of loads in flight,
//   enough for an H200's DRAM; a one-group reduction (as in the seed) runs on one compute unit.
// - Update: a work-item owns one column i and PY consecutive rows; all PY+2 rows are loaded up
//   front into registers (y-neighbours are registers, only 2 halo rows per PY re-read from
//   cache). x-neighbours come through local memory (best.cu used warp shuffles): each work-item
//   stores its PY centre values in a [row][BX+2] tile, the two edge work-items of a row segment
//   load the west/east halo column, one barrier. Coalesced 4-byte accesses (rows are not 16-byte
//   aligned). Everything that depends only on the column (R, aW, aE, the divisions) is computed
//   once per work-item, and so is 1/axis: psin = psi * (1/axis), an ulp from the exact division
//   (far inside the tolerance).
// - Cache-friendly sweep order: the reduction walks the rows upwards, the update walks them
//   downwards (reversed group id along y), so each launch starts on the rows the previous launch
//   touched last.
// Left out: best.cu's alternative paths RV=1 (flat reduction) and UV=1 (float4 update), neither
// measurably faster on the H200.
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture). PoCL runs a work-group as loops
// over its work-items, split at every barrier, and vectorises those loops across work-items;
// local-memory exchanges only add passes. So the update reads its x-neighbours straight from
// global memory (cache hits), and in each reduction group work-item 0 alone scans the group's
// share of the rows (1/RG of them) as plain loops; neither kernel has a barrier on this path.
// The geometry is the same on both paths (the host reads one set of launch directives), so the
// CPU path runs RG groups too: idle work-items cost PoCL little without a barrier (the GPU path's
// reduction tree made RG=128 groups 9x slower than the seed there).
//
// Every barrier of the GPU path is reached by every work-item of a group in straight-line code or
// in a loop of constant trip count (PoCL 5.0 aborted on other kernels' nested barrier loops).
//
// CHECKED (kevo eval gradshaf tasks/gradshaf/best.cl --backend opencl --sizes all --check-only on
// PoCL 3.1, a 2-core CPU): ok at every small and paper size, held-out included, with the defaults
// (the CPU path) and PATH=gpu; at small also PATH=cpu RG=8, PATH=gpu RB=128 RU=8 RG=256. Timings:
// docs/best-kernels.md. NOT YET RUN on PoCL 5 or NVIDIA's OpenCL.
// kevo: tune PATH auto gpu cpu
// kevo: tune RG 128 64 256 32 8
// kevo: tune RB 256 128
// kevo: tune RU 4 8
// kevo: launch gradshaf_axis_reduce block=RB grid=RG
// kevo: tune BX 32 64
// kevo: tune BY 4 8 2
// kevo: tune PY 16 8 4
// kevo: launch gradshaf_step block=BX,BY per_thread=1,PY
#ifndef PATH
#define PATH auto
#endif
#ifndef RG
#define RG 128
#endif
#ifndef RB
#define RB 256
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
#if defined(POCL_DEVICE_ADDRESS_BITS) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PATH_auto 2
#else
#define PATH_auto 1
#endif
#define PATH_gpu 1
#define PATH_cpu 2
#define PATH_ID_(p) PATH_##p
#define PATH_ID(p) PATH_ID_(p)
#if PATH_ID(PATH) != 1 && PATH_ID(PATH) != 2
#error "PATH must be auto, gpu or cpu"
#endif
#define CPU_PATH (PATH_ID(PATH) == 2)
#if RG % 4 != 0 || RG > 4096
#error "RG must be a multiple of 4 and at most 4096 (the psi_axis scratch)"
#endif
#define VW 32             // work-items per virtual warp of the reduction (index arithmetic only)
#define SEG (VW * RU)     // float4s per reduction unit
#define NVW (RB / VW)     // virtual warps per group

// psi_axis[group] = max of psi over this group's share of the interior (0 < i < nr-1,
// 0 < j < nz-1); gradshaf_step combines the RG partials. RB is a power of two, at least 32.
__kernel __attribute__((reqd_work_group_size(RB, 1, 1))) void gradshaf_axis_reduce(__global const float* restrict psi, __global float* restrict psi_axis, uint nr, uint nz)
{
    const uint t = (uint)get_local_id(0);
    const uint g = (uint)get_group_id(0);
#if CPU_PATH
    // Work-item 0 of each group scans the group's rows; no local memory, no barrier.
    if (t == 0u) {
        float m = -INFINITY;
        if (nz >= 3u && nr >= 3u) {
            const uint rows = nz - 2u;
            const uint j_end = 1u + (uint)(((ulong)rows * (g + 1u)) / RG);
            for (uint j = 1u + (uint)(((ulong)rows * g) / RG); j < j_end; ++j) {
                __global const float* restrict row = psi + (size_t)j * nr;
                for (uint i = 1u; i + 1u < nr; ++i) m = fmax(m, row[i]);
            }
        }
        psi_axis[g] = m;
    }
#else
    __local float partial[RB];
    const uint lane = t % VW;
    float m = -INFINITY;
    if (nz >= 3u && nr >= 3u) {
        const uint upr = ((nr >> 2) + 2u + SEG - 1u) / SEG;  // units per row
        const uint units = (nz - 2u) * upr;
        for (uint u = g * NVW + t / VW; u < units; u += RG * NVW) {
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
#pragma unroll
    for (uint s = RB / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] = fmax(partial[t], partial[t + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0u) psi_axis[g] = partial[0];
#endif
}

// The interior maximum: the largest of the reduction's RG partials.
float axis_value(__global const float* restrict psi_axis)
{
    float4 m = vload4(0, psi_axis);
#pragma unroll
    for (int k = 1; k < RG / 4; ++k) m = fmax(m, vload4(k, psi_axis));
    return fmax(fmax(m.x, m.y), fmax(m.z, m.w));
}

__kernel __attribute__((reqd_work_group_size(BX, BY, 1))) void gradshaf_step(__global const float* restrict psi_in, __global float* restrict psi_out, __global const float* restrict psi_axis, uint nr, uint nz, float rmin, float dr, float dz, float p_axis, float mu0, float omega)
{
    const uint tx = (uint)get_local_id(0), ty = (uint)get_local_id(1);
    const uint i = (uint)get_group_id(0) * BX + tx;
    const uint by = (uint)get_num_groups(1) - 1u - (uint)get_group_id(1);  // rows top-down
    const uint j0 = (by * BY + ty) * PY;
    const bool act = i < nr;
    const bool icol = i >= 1u && i + 1u < nr;  // interior column

    // Rows j0-1 .. j0+PY, all loads issued up front (none if the work-item is past the field).
    float r[PY + 2];
#pragma unroll
    for (int k = 0; k < PY + 2; ++k) {
        const uint jj = j0 + (uint)k - 1u;  // wraps for j0 == 0, k == 0
        r[k] = 0.0f;
        if (act && jj < nz) r[k] = psi_in[(size_t)jj * nr + i];
    }
#if CPU_PATH
    // West and east neighbours straight from memory (cache hits on a CPU), interior cells only.
    float wv[PY], ev[PY];
#pragma unroll
    for (int k = 0; k < PY; ++k) {
        const uint j = j0 + (uint)k;
        wv[k] = 0.0f;
        ev[k] = 0.0f;
        if (icol && j < nz) {
            wv[k] = psi_in[(size_t)j * nr + i - 1u];
            ev[k] = psi_in[(size_t)j * nr + i + 1u];
        }
    }
#else
    __local float tile[BY * PY * (BX + 2)];  // [ty][k][1 + tx], halo columns 0 and BX+1
    __local float* trow = tile + ty * PY * (BX + 2);
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
#pragma unroll
    for (int k = 0; k < PY; ++k) {
        trow[k * (BX + 2) + tx + 1u] = r[k + 1];
        if (west) trow[k * (BX + 2)] = h[k];
        if (east) trow[k * (BX + 2) + BX + 1u] = h[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // the only barrier, reached by every work-item
#endif
    const float inv_axis = 1.0f / axis_value(psi_axis);

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
        if (act && j < nz) {
            const float c = r[k + 1];
            float o = c;  // boundary copies
            if (icol && j >= 1u && j + 1u < nz) {
#if CPU_PATH
                const float west_v = wv[k], east_v = ev[k];
#else
                const float west_v = trow[k * (BX + 2) + tx], east_v = trow[k * (BX + 2) + tx + 2u];
#endif
                const float psin = c * inv_axis;
                const float rhs = (psin > 0.0f && psin < 1.0f) ? src * psin * (1.0f - psin) : 0.0f;
                const float lpsi = a_w * west_v + a_e * east_v + inv_dz2 * (r[k + 2] + r[k]) + a_c * c;
                o = c + w_c * (rhs - lpsi);
            }
            psi_out[(size_t)j * nr + i] = o;
        }
    }
}
