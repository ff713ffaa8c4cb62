// nbody best-known OpenCL kernel: an OpenCL C 1.2 port of the default path of tasks/nbody/best.cu
// (EXPAND = 1, MX = 1): all-pairs softened gravity, one step per launch.
// The GPU path's performance reasoning is best.cu's (measured on the H200 with CUDA); the CPU
// path (below) is for PoCL; timings of this file are in docs/best-kernels.md.
//
// What makes it fast (the ideas of best.cu):
// - Register blocking: a work-item owns PB = 8 bodies (i = base + k * BX + tx), so one
//   local-memory record of a j body feeds PB pairs.
// - The j range is split over the SJ = 64 rows of a BX x SJ = 4 x 64 work-group: a group owns only
//   BX * PB = 32 bodies, so moderate N still gives many work-groups; the SJ rows' partial sums
//   meet once per group in local memory (aliasing the tile), and the body update runs once per body.
// - j tiles of SJ * TJ = 1024 records are staged in local memory; the next tile's global loads are
//   issued into registers before the current tile is computed. Records past n are clamped to
//   record n-1 with mass 0, so they add exactly 0 (no bounds logic in the inner loop).
// - Expanded r^2 in coordinates relative to body 0: r2 = |x_j|^2 + (|x_i|^2 + eps^2) - 2 x_i.x_j
//   (1 add + 3 fma: |x_j|^2 is stored in the tile record, -2 x_i and |x_i|^2 + eps^2 are formed
//   once per body). The tile holds two records per j, (x, y, z, |x|^2) and (m x, m y, m z, m), so
//   a_i = sum_j m_j r^-3 x_j - x_i sum_j m_j r^-3 costs per pair 1 add + 3 fma, one rsqrt, 2 mul
//   and 4 fma. rsqrt is native_rsqrt (NATIVE = 1, the default) or the accurate rsqrt (NATIVE = 0).
// What differs from best.cu: native_rsqrt instead of inline-PTX rsqrt.approx.ftz; no
// __launch_bounds__ or __ldg; the work-group width BX is fixed at 4 (the literal 4 of the launch
// directive); the CUDA knobs BX, EXPAND, MX, UNR and MINB are not carried over (they depend on
// one another or on the local-memory budget), so every combination of the knobs below compiles
// and fits: local memory at most 33.3 KB (the reduction at PB = 8, SJ = 64). Barriers are
// unconditional (one at the end of each tile), the safer form for PoCL 3.1 (see hmc/best.cl).
//
// Checked on PoCL 3.1 (pthread CPU device, 2 cores) with the snapshot binary:
//   kevo eval nbody tasks/nbody/best.cl --backend opencl --profile small --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   kevo eval nbody tasks/nbody/best.cl --backend opencl --profile paper --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   kevo eval nbody tasks/nbody/best.cl --backend opencl --profile large --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   all 36 combinations of PB, SJ, TJ, NATIVE at the small profile -> ok; and a scratch harness
//   against seed.cl (3 steps, output buffers pre-filled with NaN) at n = 1, 5, 33, 100, 257,
//   1000, 1025, 2049 with three knob sets: within 2.4e-7 of the seed.
// Indicative PoCL times of the GPU path (paper profile, 2-core CPU): seed / this file 1.60 / 4.83 ms
// at n=256, 25.5 / 18.4 ms at 1024, 177 / 54 ms at 2048, held-out 512: 6.4 / 9.6 ms.
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture; every other implementation gets
// the GPU path above). Work-item (tx, 0) of a group owns the group's PB bodies
// base + k*BX + tx as the lanes of one PB-wide vector, so the loop over all j is explicit SIMD with
// each record read once per PB bodies; the other rows of the group idle; the seed's r^-3 by rsqrt
// (NATIVE as above); no local memory, no barrier.
// The launch geometry is the GPU path's on both paths (the host reads one set of directives).
// PoCL runs a work-group as loops over its work-items, split at every barrier, and vectorises
// such a loop only when a work-item's code has no loop of its own.
//
// kevo: tune PATH auto gpu cpu
// kevo: tune PB 8 4 2
// kevo: tune SJ 64 32 16
// kevo: tune TJ 16 8
// kevo: tune NATIVE 1 0
// kevo: launch nbody_step block=4,SJ per_thread=PB
#ifndef PB
#define PB 8
#endif
#ifndef SJ
#define SJ 64
#endif
#ifndef TJ
#define TJ 16
#endif
#ifndef NATIVE
#define NATIVE 1
#endif
#ifndef PATH
#define PATH auto
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
#define BX 4                          // work-group width: must equal the 4 of the launch directive

#define NT (BX * SJ)                  // work-items per group
#define BPB (BX * PB)                 // bodies per group
#define TILE (SJ * TJ)                // j records per local-memory tile
#define LPT ((TILE + NT - 1) / NT)    // records each work-item stages per tile
#define TILE_F4 (2 * TILE)            // float4 of the tile: (x, y, z, |x|^2) then (m x, m y, m z, m)
#define RED_F (4 * BPB * (SJ + 1))    // floats of the reduction (rows padded to SJ + 1)
#define SMEM_F4 (TILE_F4 > (RED_F + 3) / 4 ? TILE_F4 : (RED_F + 3) / 4)

#if NATIVE
#define RSQRT(x) native_rsqrt(x)
#else
#define RSQRT(x) rsqrt(x)
#endif

// Record j of the j range as (x, y, z, mass); j >= n reads record n-1 with mass 0.
static inline float4 load_record(__global const float4* restrict pos, __global const float* restrict mass, uint j, uint n)
{
    const uint jc = j < n ? j : n - 1u;
    float4 q = pos[jc];
    const float m = mass[jc];
    q.w = j < n ? m : 0.0f;
    return q;
}

#if CPU_PATH
// The CPU path: work-item (tx, 0) of a group owns the PB bodies base + k*BX + tx of the GPU path
// (the other rows idle) and holds them as the lanes of PBx vectors, so the j loop is explicit SIMD;
// each record is read once per PB bodies; no local memory, no barrier.
#if PB == 8
#define VEC float8
#elif PB == 4
#define VEC float4
#else
#define VEC float2
#endif
typedef union { VEC v; float s[PB]; } Lanes;

__kernel void nbody_step(__global const float4* restrict pos_in, __global float4* restrict pos_out,
                         __global const float4* restrict vel_in, __global float4* restrict vel_out,
                         __global const float* restrict mass, uint n, float dt, float eps, float G)
{
    if (get_local_id(1) != 0) return;  // no barrier in this kernel
    const uint tx = (uint)get_local_id(0), base = (uint)get_group_id(0) * BPB;
    Lanes px, py, pz;
#pragma unroll
    for (int k = 0; k < PB; ++k) {
        const uint i = base + (uint)k * BX + tx;
        const float4 p = pos_in[i < n ? i : n - 1u];
        px.s[k] = p.x;
        py.s[k] = p.y;
        pz.s[k] = p.z;
    }
    const VEC eps2 = (VEC)(eps * eps);
    VEC ax = (VEC)(0.0f), ay = (VEC)(0.0f), az = (VEC)(0.0f);
    for (uint j = 0; j < n; ++j) {
        const float4 q = pos_in[j];
        const VEC dx = (VEC)(q.x) - px.v, dy = (VEC)(q.y) - py.v, dz = (VEC)(q.z) - pz.v;
        const VEC r2 = fma(dz, dz, fma(dy, dy, fma(dx, dx, eps2)));  // j == i adds nothing: d = 0
        const VEC inv = RSQRT(r2);
        const VEC s = (VEC)(mass[j]) * (inv * inv * inv);
        ax = fma(s, dx, ax);
        ay = fma(s, dy, ay);
        az = fma(s, dz, az);
    }
    const Lanes lx = {ax}, ly = {ay}, lz = {az};
    const float gdt = G * dt;
#pragma unroll
    for (int k = 0; k < PB; ++k) {
        const uint i = base + (uint)k * BX + tx;
        if (i < n) {
            const float4 p = pos_in[i];
            float4 v = vel_in[i];
            v.x = fma(gdt, lx.s[k], v.x);
            v.y = fma(gdt, ly.s[k], v.y);
            v.z = fma(gdt, lz.s[k], v.z);
            vel_out[i] = v;
            pos_out[i] = (float4)(fma(v.x, dt, p.x), fma(v.y, dt, p.y), fma(v.z, dt, p.z), p.w);
        }
    }
}
#else
__kernel void nbody_step(__global const float4* restrict pos_in, __global float4* restrict pos_out,
                         __global const float4* restrict vel_in, __global float4* restrict vel_out,
                         __global const float* restrict mass, uint n, float dt, float eps, float G)
{
    // One buffer: the tile while the j loop runs, then the SJ rows' partial sums.
    __local float4 smem[SMEM_F4];
    __local float4* tile = smem;          // (x, y, z, |x|^2), relative to body 0
    __local float4* tm = smem + TILE;     // (m x, m y, m z, m)
    __local float* red = (__local float*)smem;

    const uint tx = (uint)get_local_id(0), ty = (uint)get_local_id(1), tid = ty * BX + tx;
    const uint base = (uint)get_group_id(0) * BPB;
    const float eps2 = eps * eps;
    const float4 c0 = pos_in[0];  // the origin of the expansion: body 0

    // Own bodies (relative to c0, times -2), |x_i|^2 + eps^2, and the accumulators.
    float px[PB], py[PB], pz[PB], ci[PB], as[PB], ax[PB], ay[PB], az[PB];
#pragma unroll
    for (int k = 0; k < PB; ++k) {
        const uint i = base + (uint)k * BX + tx;
        const float4 p = i < n ? pos_in[i] : c0;
        const float x = p.x - c0.x, y = p.y - c0.y, z = p.z - c0.z;
        ci[k] = fma(x, x, fma(y, y, fma(z, z, eps2)));
        px[k] = -2.0f * x;
        py[k] = -2.0f * y;
        pz[k] = -2.0f * z;
        as[k] = 0.0f;
        ax[k] = 0.0f;
        ay[k] = 0.0f;
        az[k] = 0.0f;
    }

    // Stage tile 0 in registers.
    float4 pre[LPT];
#pragma unroll
    for (int l = 0; l < LPT; ++l) pre[l] = load_record(pos_in, mass, (uint)l * NT + tid, n);

    const uint ntiles = (n + TILE - 1u) / TILE;
    for (uint t = 0; t < ntiles; ++t) {
#pragma unroll
        for (int l = 0; l < LPT; ++l) {
            const uint idx = (uint)l * NT + tid;
            if (TILE % NT == 0 || idx < TILE) {
                float4 q = pre[l];
                q.x -= c0.x;
                q.y -= c0.y;
                q.z -= c0.z;
                tm[idx] = (float4)(q.w * q.x, q.w * q.y, q.w * q.z, q.w);
                q.w = fma(q.x, q.x, fma(q.y, q.y, q.z * q.z));
                tile[idx] = q;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t + 1u < ntiles) {  // the next tile's loads, in flight while this tile computes
            const uint j0 = (t + 1u) * TILE;
#if TILE % NT == 0
            if (j0 + TILE <= n) {  // a full tile: no clamping
#else
            if (0) {
#endif
#pragma unroll
                for (int l = 0; l < LPT; ++l) {
                    const uint j = j0 + (uint)l * NT + tid;
                    pre[l] = pos_in[j];
                    pre[l].w = mass[j];
                }
            } else {
#pragma unroll
                for (int l = 0; l < LPT; ++l) pre[l] = load_record(pos_in, mass, j0 + (uint)l * NT + tid, n);
            }
        }
        // Row ty takes records ty, ty + SJ, ...: the BX work-items of a row read the same record.
#pragma unroll 4
        for (int jj = 0; jj < TJ; ++jj) {
            const float4 q = tile[jj * SJ + ty];
            const float4 qm = tm[jj * SJ + ty];
#pragma unroll
            for (int k = 0; k < PB; ++k) {
                float r2 = q.w + ci[k];            // |x_j|^2 + |x_i|^2 + eps^2
                r2 = fma(px[k], q.x, r2);          // - 2 x_i . x_j
                r2 = fma(py[k], q.y, r2);
                r2 = fma(pz[k], q.z, r2);
                const float inv = RSQRT(r2);
                const float inv3 = (inv * inv) * inv;  // r2^(-3/2)
                as[k] = fma(inv3, qm.w, as[k]);        // S  += m_j r^-3
                ax[k] = fma(inv3, qm.x, ax[k]);        // Sx += m_j x_j r^-3
                ay[k] = fma(inv3, qm.y, ay[k]);
                az[k] = fma(inv3, qm.z, az[k]);
            }
        }
        // Every row is done with this tile before the next one (or the reduction, which aliases
        // the tile) overwrites it. Unconditional: PoCL 3.1 miscompiles barriers under conditions.
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    // Combine the SJ rows' partial sums per body.
#pragma unroll
    for (int k = 0; k < PB; ++k) {
        const uint b = (uint)k * BX + tx;
        red[(4u * b + 0u) * (SJ + 1) + ty] = ax[k];
        red[(4u * b + 1u) * (SJ + 1) + ty] = ay[k];
        red[(4u * b + 2u) * (SJ + 1) + ty] = az[k];
        red[(4u * b + 3u) * (SJ + 1) + ty] = as[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint r = tid; r < 4u * BPB; r += NT) {
        float s = 0.0f;
#pragma unroll 8
        for (int y = 0; y < SJ; ++y) s += red[r * (SJ + 1) + y];
        red[r * (SJ + 1)] = s;  // row r is read and written by this work-item only
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = tid; b < BPB; b += NT) {
        const uint i = base + b;
        if (i < n) {
            const float gdt = G * dt;
            const float4 p = pos_in[i];
            const float S = red[(4u * b + 3u) * (SJ + 1)];
            // sum_j s (x_j - x_i) = Sx - x_i S, with x_i relative to body 0 as the x_j were.
            const float a_x = fma(-(p.x - c0.x), S, red[(4u * b + 0u) * (SJ + 1)]);
            const float a_y = fma(-(p.y - c0.y), S, red[(4u * b + 1u) * (SJ + 1)]);
            const float a_z = fma(-(p.z - c0.z), S, red[(4u * b + 2u) * (SJ + 1)]);
            float4 v = vel_in[i];
            v.x = fma(gdt, a_x, v.x);
            v.y = fma(gdt, a_y, v.y);
            v.z = fma(gdt, a_z, v.z);
            vel_out[i] = v;
            pos_out[i] = (float4)(fma(v.x, dt, p.x), fma(v.y, dt, p.y), fma(v.z, dt, p.z), p.w);
        }
    }
}
#endif
