// Study copy of tasks/nbody/best.cu for the strategy comparison (docs/study-strategies/README.md):
// the same kernel, its knob space cut or widened to PB x SJ x TJ x UNR x BX = points so every task's space has 48.
// nbody best-known kernel for the H200 (sm_90): all-pairs softened gravity, one step per launch.
//
// What made it fast (the model counts 20 FLOP per pair; the floor on Hopper is the issue rate,
// one warp instruction per clock per scheduler, FP32 and MUFU alike):
// - 11 FP32 instructions + 1 MUFU.RSQ per pair (EXPAND = 1; 10 with the default MX = 1, below):
//   r2 = |x_j|^2 + (|x_i|^2 + eps^2) - 2 x_i.x_j is 1 FADD + 3 FFMA (|x_j|^2 is computed once per
//   tile record and stored next to it; -2 x_i and |x_i|^2 + eps^2 once per body), s = m_j r^-3 is
//   3 FMUL, and the sums S += s, Sx += s x_j (1 FADD + 3 FFMA) give a_i = Sx - x_i S at the end.
//   The textbook form (d = x_j - x_i: 3 FADD + 3 FFMA for r2, 3 FFMA to accumulate; EXPAND = 0)
//   needs 12.
//   Coordinates are taken relative to body 0 (so a translated cluster keeps its accuracy); the
//   expansion loses ~1e-7 |x|^2 absolute in r2, i.e. ~1e-3 relative at r2 = eps^2 = 0.0009 for
//   |x| ~ 3: a float32 model of the largest case (N = 32768, outlier cluster, eps = 0.03) gives
//   |a| errors <= 0.4 (textbook: 0.005) where the position tolerance allows ~40.
// - rsqrt is inline PTX rsqrt.approx.ftz.f32: plain rsqrtf() without -ftz adds a denormal guard
//   (FSETP + 2 predicated FMUL) per pair, and r2 >= eps^2 > 0 is never denormal.
// - Register blocking: each thread owns PB = 8 bodies, so one broadcast LDS.128 (+ one LDS.32 for
//   |x_j|^2) of a j record feeds 8 pairs: 12.25 issue slots per pair, a ceiling of
//   20 / (2 * 12.25) = 0.82 of the FP32 FMA peak (EXPAND = 0, PB = 4: 13.25 -> 0.75; the default
//   MX = 1, two LDS.128 per j: 11.25 -> 0.89).
// - The j range is split over SJ = 64 thread rows (block BX x SJ = 4 x 64): a block owns only
//   BX * PB = 32 bodies, so N = 8192 already gives 256 blocks of 8 warps (two per SM), and every
//   size of the large profile (8192, 12288, 16384, 32768) fills the 132 SMs to 97% (whole blocks
//   per SM: 256/264, 384/396, 512/528, 1024/1056). The SJ partial sums meet once per block in
//   shared memory (aliasing the tile); the body update (v, r) runs once per body.
// - Tiles of SJ * TJ = 1024 j records are staged through registers (the next tile's global loads
//   are issued before the current tile is computed); full tiles load at immediate offsets with no
//   bounds logic, and the inner loop is unrolled.
// - Padding records past n carry mass 0 (at record n-1's position): they add exactly 0.
// Measured on the H200 (large profile, fraction of the measured 65.45 TFLOP/s FP32 static
// ceiling): 0.54-0.61 (0.539 at 8192, 0.614 at 32768, held-out 12288: 0.570); the 0.70 goal and
// the ~0.72-0.78 estimate are missed: latency and the partial wave, not the instruction count
// (~11.4 issue slots per pair with MX = 1 would allow ~0.88). Nsight Compute at 12288 (MX = 1):
// 127 registers -> 2 blocks of 256 per SM (25% occupancy), grid 384 blocks = 1.45 waves, issue
// slots busy 69% (IPC 2.92 of 4), FMA pipe 57.6%.
// Knobs at the held-out 12288: MX=0 0.541, MX=1 0.568; MX=1 with PB=4 BX=8 SJ=32 TJ=8 MINB=4
// 0.502; EXPAND=0 0.429; MX=1 with SJ=64 (default) 0.570, SJ=32 0.576, SJ=16 0.423.
//
// kevo: tune PB 8 4 2
// kevo: tune BX 4 8
// kevo: tune SJ 64 32
// kevo: tune TJ 16 32
// kevo: tune UNR 4 8
// kevo: launch nbody_step block=BX,SJ per_thread=PB
#ifndef EXPAND
#define EXPAND 1
#endif
#ifndef PB
#define PB 8
#endif
#ifndef BX
#define BX 4
#endif
#ifndef SJ
#define SJ 64
#endif
#ifndef TJ
#define TJ 16
#endif
#ifndef UNR
#define UNR 4
#endif

#define NT (BX * SJ)                 // threads per block
#define BPB (BX * PB)                // bodies per block
#define TILE (SJ * TJ)               // j records per shared-memory tile
#define LPT ((TILE + NT - 1) / NT)   // records each thread stages per tile
#define NACC (EXPAND ? 4 : 3)        // accumulators per body
#define TILE_F (MX ? 8 * TILE : EXPAND ? 5 * TILE : 4 * TILE)  // floats of the tile (+ |x_j|^2)
#define RED_F (NACC * BPB * (SJ + 1))              // floats of the reduction (padded rows)
#define SMEM_F (TILE_F > RED_F ? TILE_F : RED_F)
// MX = 1 (the default; needs EXPAND = 1): the tile holds two records per j, (x, y, z, |x|^2) and
// (m x, m y, m z, m), so s = m r^-3 is never formed: inv3 = inv * inv * inv (2 FMUL), S += inv3 m
// and Sx += inv3 (m x) (4 FFMA): 10 FP32 + 1 MUFU per pair instead of 11 + 1, at the price of one
// LDS.128 instead of an LDS.32 per j (0.125 -> 0.25 LDS per pair at PB = 8).
#ifndef MX
#define MX 1
#endif
// MINB > 0: __launch_bounds__(NT, MINB) (more resident blocks per SM; e.g. PB=4 BX=8 MINB=4 gives
// 32 warps per SM to smooth the MUFU/FP32 pipe interplay). 0: plain __launch_bounds__(NT).
#ifndef MINB
#define MINB 0
#endif
#if MX && !EXPAND
#error "MX = 1 needs EXPAND = 1"
#endif
constexpr int kUnroll = UNR;         // j records per unrolled inner-loop body

// Approximate reciprocal square root with flush-to-zero: a single MUFU.RSQ.
__device__ __forceinline__ float rsqrt_ftz(float x)
{
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// Record j of the j range as (x, y, z, mass); j >= n reads record n-1 with mass 0.
__device__ __forceinline__ float4 load_record(const float4* pos, const float* mass, unsigned j, unsigned n)
{
    const unsigned jc = j < n ? j : n - 1;
    float4 q = __ldg(pos + jc);
    const float m = __ldg(mass + jc);
    q.w = j < n ? m : 0.0f;
    return q;
}

#if MINB > 0
#define NB_BOUNDS __launch_bounds__(NT, MINB)
#else
#define NB_BOUNDS __launch_bounds__(NT)
#endif
extern "C" __global__ void NB_BOUNDS nbody_step(const float4* pos_in, float4* pos_out, const float4* vel_in, float4* vel_out, const float* mass, unsigned n, float dt, float eps, float G)
{
    // One buffer: the tile (x, y, z, mass records, then |x|^2 per record) while the j loop runs,
    // then the SJ rows' partial sums (rows padded to SJ + 1 against bank conflicts).
    __shared__ __align__(16) float smem[SMEM_F];
    float4* tile = reinterpret_cast<float4*>(smem);
#if !MX
    float* tw = smem + 4 * TILE;
#else
    float4* tm = reinterpret_cast<float4*>(smem + 4 * TILE);  // (m x, m y, m z, m) records
#endif
    float* red = smem;

    const unsigned tx = threadIdx.x, ty = threadIdx.y, tid = ty * BX + tx;
    const unsigned base = blockIdx.x * BPB;
    const float eps2 = eps * eps;
#if EXPAND
    const float4 c0 = __ldg(pos_in);  // the origin of the expansion: body 0
#else
    const float4 c0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif

    // Own bodies (relative to c0) and accumulators.
    float px[PB], py[PB], pz[PB], ax[PB], ay[PB], az[PB];
#if EXPAND
    float ci[PB], as[PB];
#endif
#pragma unroll
    for (int k = 0; k < PB; ++k) {
        const unsigned i = base + k * BX + tx;
        const float4 p = i < n ? __ldg(pos_in + i) : c0;
        px[k] = p.x - c0.x;
        py[k] = p.y - c0.y;
        pz[k] = p.z - c0.z;
#if EXPAND
        ci[k] = fmaf(px[k], px[k], fmaf(py[k], py[k], fmaf(pz[k], pz[k], eps2)));  // |x_i|^2 + eps^2
        px[k] *= -2.0f;
        py[k] *= -2.0f;
        pz[k] *= -2.0f;
        as[k] = 0.0f;
#endif
        ax[k] = 0.0f;
        ay[k] = 0.0f;
        az[k] = 0.0f;
    }

    // Stage tile 0 in registers. Records past n are clamped to record n-1 (a valid address) with
    // mass 0, so they add exactly 0; no predicated loads, no branches.
    float4 pre[LPT];
#pragma unroll
    for (int l = 0; l < LPT; ++l) pre[l] = load_record(pos_in, mass, l * NT + tid, n);

    const unsigned ntiles = (n + TILE - 1) / TILE;
    for (unsigned t = 0; t < ntiles; ++t) {
        if (t > 0) __syncthreads();  // every row is done with the previous tile
#pragma unroll
        for (int l = 0; l < LPT; ++l) {
            const unsigned idx = l * NT + tid;
            if (TILE % NT == 0 || idx < TILE) {
                float4 q = pre[l];
                q.x -= c0.x;
                q.y -= c0.y;
                q.z -= c0.z;
#if MX
                tm[idx] = make_float4(q.w * q.x, q.w * q.y, q.w * q.z, q.w);
                q.w = fmaf(q.x, q.x, fmaf(q.y, q.y, q.z * q.z));
                tile[idx] = q;
#else
                tile[idx] = q;
#if EXPAND
                tw[idx] = fmaf(q.x, q.x, fmaf(q.y, q.y, q.z * q.z));
#endif
#endif
            }
        }
        __syncthreads();
        if (t + 1 < ntiles) {  // issue the next tile's loads now; they land while this tile computes
            const unsigned j0 = (t + 1) * TILE;
            if (j0 + TILE <= n && TILE % NT == 0) {  // a full tile: plain loads at immediate offsets
                const float4* pp = pos_in + (j0 + tid);
                const float* mp = mass + (j0 + tid);
#pragma unroll
                for (int l = 0; l < LPT; ++l) {
                    pre[l] = __ldg(pp + l * NT);
                    pre[l].w = __ldg(mp + l * NT);
                }
            } else {  // the last, partial tile
#pragma unroll
                for (int l = 0; l < LPT; ++l) pre[l] = load_record(pos_in, mass, j0 + l * NT + tid, n);
            }
        }
        // Row ty takes records ty, ty + SJ, ...: the rows of one warp read adjacent records
        // (distinct banks), the lanes of one row read the same record (broadcast).
#pragma unroll kUnroll
        for (int jj = 0; jj < TJ; ++jj) {
            const float4 q = tile[jj * SJ + ty];
#if MX
            const float4 qm = tm[jj * SJ + ty];
#elif EXPAND
            const float wq = tw[jj * SJ + ty];
#endif
#pragma unroll
            for (int k = 0; k < PB; ++k) {
#if MX
                float r2 = q.w + ci[k];             // |x_j|^2 + |x_i|^2 + eps^2
                r2 = fmaf(px[k], q.x, r2);          // - 2 x_i . x_j
                r2 = fmaf(py[k], q.y, r2);
                r2 = fmaf(pz[k], q.z, r2);
                const float inv = rsqrt_ftz(r2);
                const float inv3 = (inv * inv) * inv;  // r2^(-3/2)
                as[k] = fmaf(inv3, qm.w, as[k]);       // S += m_j r^-3
                ax[k] = fmaf(inv3, qm.x, ax[k]);       // Sx += m_j x_j r^-3
                ay[k] = fmaf(inv3, qm.y, ay[k]);
                az[k] = fmaf(inv3, qm.z, az[k]);
#elif EXPAND
                float r2 = wq + ci[k];             // |x_j|^2 + |x_i|^2 + eps^2
                r2 = fmaf(px[k], q.x, r2);          // - 2 x_i . x_j
                r2 = fmaf(py[k], q.y, r2);
                r2 = fmaf(pz[k], q.z, r2);
                const float inv = rsqrt_ftz(r2);
                const float s = (q.w * inv) * (inv * inv);  // m_j / (r2)^(3/2)
                as[k] += s;
                ax[k] = fmaf(s, q.x, ax[k]);
                ay[k] = fmaf(s, q.y, ay[k]);
                az[k] = fmaf(s, q.z, az[k]);
#else
                const float dx = q.x - px[k], dy = q.y - py[k], dz = q.z - pz[k];
                float r2 = fmaf(dx, dx, eps2);
                r2 = fmaf(dy, dy, r2);
                r2 = fmaf(dz, dz, r2);
                const float inv = rsqrt_ftz(r2);
                const float s = (q.w * inv) * (inv * inv);  // m_j / (r2)^(3/2)
                ax[k] = fmaf(s, dx, ax[k]);
                ay[k] = fmaf(s, dy, ay[k]);
                az[k] = fmaf(s, dz, az[k]);
#endif
            }
        }
    }

    // Combine the SJ rows' partial sums per body (red aliases the tile: wait for every row).
    __syncthreads();
#pragma unroll
    for (int k = 0; k < PB; ++k) {
        const unsigned b = k * BX + tx;
        red[(NACC * b + 0) * (SJ + 1) + ty] = ax[k];
        red[(NACC * b + 1) * (SJ + 1) + ty] = ay[k];
        red[(NACC * b + 2) * (SJ + 1) + ty] = az[k];
#if EXPAND
        red[(NACC * b + 3) * (SJ + 1) + ty] = as[k];
#endif
    }
    __syncthreads();
    for (unsigned r = tid; r < NACC * BPB; r += NT) {
        float s = 0.0f;
#pragma unroll 8
        for (int y = 0; y < SJ; ++y) s += red[r * (SJ + 1) + y];
        red[r * (SJ + 1)] = s;  // row r is read and written by this thread only
    }
    __syncthreads();
    for (unsigned b = tid; b < BPB; b += NT) {
        const unsigned i = base + b;
        if (i < n) {
            const float gdt = G * dt;
            const float4 p = __ldg(pos_in + i);
            float a_x = red[(NACC * b + 0) * (SJ + 1)];
            float a_y = red[(NACC * b + 1) * (SJ + 1)];
            float a_z = red[(NACC * b + 2) * (SJ + 1)];
#if EXPAND
            // sum_j s (x_j - x_i) = Sx - x_i S, with x_i relative to body 0 as the x_j were.
            const float S = red[(NACC * b + 3) * (SJ + 1)];
            a_x = fmaf(-(p.x - c0.x), S, a_x);
            a_y = fmaf(-(p.y - c0.y), S, a_y);
            a_z = fmaf(-(p.z - c0.z), S, a_z);
#endif
            float4 v = __ldg(vel_in + i);
            v.x = fmaf(gdt, a_x, v.x);
            v.y = fmaf(gdt, a_y, v.y);
            v.z = fmaf(gdt, a_z, v.z);
            vel_out[i] = v;
            pos_out[i] = make_float4(fmaf(v.x, dt, p.x), fmaf(v.y, dt, p.y), fmaf(v.z, dt, p.z), p.w);
        }
    }
}
