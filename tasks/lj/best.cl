// lj best-known OpenCL kernels: an OpenCL C 1.2 port of tasks/lj/best.cu (Lennard-Jones MD with a
// cell list rebuilt every step: clear, build with atomic appends, step).
// The performance reasoning below is best.cu's (measured on the H200 with CUDA); timings of this
// file are in docs/best-kernels.md. One path for every device: it is faster than the seed on PoCL.
//
// What makes it fast (lj_step; the clear and build kernels keep the seed's exact semantics):
// - Cell-centric step: a work-group works on a "unit" of SEG = 4 consecutive cells along x (one
//   row y, z) and stages its whole neighbourhood (9 rows x (SEG + 2) cells, ~560-750 particles)
//   in local memory once: 16 work-items copy one cell each (all cell_list loads issued first,
//   then all position gathers), so every position is gathered ~13.5 times per step instead of
//   once per candidate (~280 times) as in the seed.
// - Each staged record is wrapped into the box and shifted by the periodic image of its cell
//   relative to the unit (-L, 0 or +L per axis), so d = r_j - r_i is 3 subtractions: no per-pair
//   minimum image and no per-pair index load or global gather.
// - Work items are (neighbour row, home particle): the 3 cells of a row are contiguous in local
//   memory, so an item is one flat loop over ~31 candidates (unrolled by two by hand); item k goes
//   to work-item k % BLOCK, so neighbouring work-items share the row and mostly the home cell
//   (broadcast reads, similar trip counts). Branch-free force, one native_recip per candidate.
// - Work-groups loop over units (group-stride), so the host's particle-based grid (per_thread = PT)
//   only sets how many groups share the units. A unit whose neighbourhood exceeds the local-memory
//   capacity (never at the task's densities) falls back to the seed's gather loop.
// What differs from best.cu (OpenCL C 1.2: no warp shuffles, no float atomics):
// - the prefix sum over the neighbourhood's <= 64 cell counts is a Hillis-Steele scan in local
//   memory (6 rounds, one barrier each) instead of a warp-shuffle scan;
// - the 9 row items of a home particle write their partial forces to their own local-memory slots
//   (9 x HCAP per component) and the update sums them in a fixed order, instead of shared-memory
//   float atomics (deterministic, too);
// - a staged record's particle index has its own local array instead of the w bits;
// - a staged coordinate is kept within half a box of its cell (+-L if the wrap rounded the other
//   way than the build's, e.g. x a hair below a multiple of L), so no record sits one box away;
// - every barrier is unconditional within the unit loop (the staged and fallback paths are chosen
//   by a uniform flag between barriers), the safe form for PoCL 3.1 (see hmc/best.cl), and the
//   prefix sum's rounds are written out, so no loop with a barrier sits inside the unit loop
//   (PoCL 5.0 compiles such a nested loop too, tried; the abort below had another cause);
// - PoCL 5.0's work-group generator aborts ("Assertion 'region_entry_barrier != NULL' failed")
//   on an if/else between two barriers of a loop that has barriers, when one arm is a loop and
//   the other has control flow too (here: `if (staged) update loop else fallback loop`). The
//   update is therefore one loop over the home particles with the uniform staged/fallback choice
//   inside it (update_staged / update_fallback): the same work (on PoCL 3.1, one thread, the
//   same CPU time within 3% at the paper sizes).
// Knobs: every combination compiles and is correct; local memory about 35 KB.
//
// Checked on PoCL 3.1 (pthread CPU device, 2 cores) with the snapshot binary:
//   kevo eval lj tasks/lj/best.cl --backend opencl --profile small --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   kevo eval lj tasks/lj/best.cl --backend opencl --profile paper --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   kevo eval lj tasks/lj/best.cl --backend opencl --profile large --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   all 24 combinations of BLOCK, PT, SEG at the small profile -> ok; and a scratch harness
//   against seed.cl (output buffers pre-filled with NaN, scratch with all bits set) at 8 lattice
//   sizes (n = 216 to 2197, m = 3 to 5) with four knob sets, plus a dense box (n = 1000, m = 3)
//   that takes the fallback path: within 1e-6 of the seed.
// After the update became one loop (PoCL 5.0's abort), on PoCL 3.1 and on PoCL 5.0
// (scripts/pocl5-chroot.sh): the small check above, the 12 combinations of BLOCK, SEG and PT 1, 2,
// and a copy with CAP 16 (every unit takes the fallback) -> ok at every small size.
// Indicative PoCL times (paper profile, 2-core CPU, says nothing about a GPU), seed / this file:
// 134 / 47 ms (1728), 220 / 76 ms (4096), 338 / 125 ms (10648), held-out 2744: 122 / 44 ms.
//
// kevo: tune BLOCK 128 256
// kevo: tune PT 2 1 4 8
// kevo: tune SEG 4 2 3
// kevo: launch lj_clear_cells block=256
// kevo: launch lj_build_cells block=256
// kevo: launch lj_step block=BLOCK per_thread=PT
#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef PT
#define PT 2
#endif
#ifndef SEG
#define SEG 4
#endif
#define CAP 1024                       // staged records per unit (a unit holds ~560-750 at the task's densities)
#define HCAP 128                       // home particles per unit (~40-55)
#define NCMAX (9 * (SEG + 2))          // cells of a unit's neighbourhood
#define NSCAN 64                       // scan width (>= NCMAX)
#define NHW (BLOCK / 16)               // groups of 16 work-items, one cell each when staging
#define ITER ((NCMAX + NHW - 1) / NHW) // neighbourhood cells per group of 16
#if NCMAX > NSCAN
#error "SEG too large: the neighbourhood's prefix sum covers 64 cells"
#endif
#if BLOCK % 16 != 0 || BLOCK < NSCAN
#error "BLOCK must be a multiple of 16 and at least 64"
#endif

// Cell coordinate of one (unwrapped) position component: wrap into [0, L), then clamp against rounding.
int cell_of(float x, uint m, float L)
{
    const float w = x - L * floor(x / L);
    int c = (int)floor(w * (float)m / L);
    return c < 0 ? 0 : (c >= (int)m ? (int)m - 1 : c);
}

static inline int wrap_cell(int g, int m) { return g < 0 ? g + m : (g >= m ? g - m : g); }
static inline float image_shift(int g, int m, float L) { return g < 0 ? -L : (g >= m ? L : 0.0f); }

// One coordinate of a staged record: x wrapped into the box, kept within half a box of its cell's
// lower edge lo (a wrap that rounded the other way is off by exactly L), then shifted by the
// cell's periodic image s.
static inline float staged_coord(float x, float lo, float s, float L, float invL)
{
    float w = fma(-L, floor(x * invL), x);
    const float t = w - lo;
    w = t > 0.5f * L ? w - L : (t < -0.5f * L ? w + L : w);
    return w + s;
}

// One candidate q against the home particle pi, accumulated into ax, ay, az. Branch-free; the
// select also discards the inf of j == i (r2 = 0).
#define LJ_PAIR(REC)                                                            \
    do {                                                                        \
        const float4 q = (REC);                                                 \
        const float dx = q.x - pi.x, dy = q.y - pi.y, dz = q.z - pi.z;          \
        const float r2 = fma(dz, dz, fma(dy, dy, dx * dx));                     \
        const float a2 = native_recip(r2);           /* r^-2 */                 \
        const float a6 = a2 * a2 * a2;               /* r^-6 */                 \
        const float f = (a6 * a2) * (a6 - 0.5f);     /* F = -48 f d */          \
        const float fs = (r2 < rcut2 && r2 > 1e-12f) ? f : 0.0f;                \
        ax = fma(fs, dx, ax);                                                   \
        ay = fma(fs, dy, ay);                                                   \
        az = fma(fs, dz, az);                                                   \
    } while (0)

// One round of the prefix sum over NSCAN slots: dst = src + src shifted by o; then a barrier. A
// plain block, not do-while(0): no loop construct around the barrier at all.
#define SCAN_ROUND(o, src, dst)                                                     \
    {                                                                               \
        if (tid < NSCAN) (dst)[tid] = (src)[tid] + (tid >= (o) ? (src)[tid - (o)] : 0); \
        barrier(CLK_LOCAL_MEM_FENCE);                                               \
    }

// Symplectic Euler for home particle h of a staged unit; its 9 row partials summed in a fixed order.
static inline void update_staged(int h, int h0, __local const uint* recj, __local const float* pfx,
                                 __local const float* pfy, __local const float* pfz,
                                 __global const float4* restrict pos_in, __global float4* restrict pos_out,
                                 __global const float4* restrict vel_in, __global float4* restrict vel_out, float dt)
{
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
#pragma unroll
    for (int r = 0; r < 9; ++r) {
        fx += pfx[r * HCAP + h];
        fy += pfy[r * HCAP + h];
        fz += pfz[r * HCAP + h];
    }
    const uint j = recj[h0 + h];
    const float4 p = pos_in[j];
    float4 v = vel_in[j];
    v.x = fma(-48.0f * fx, dt, v.x);
    v.y = fma(-48.0f * fy, dt, v.y);
    v.z = fma(-48.0f * fz, dt, v.z);
    vel_out[j] = v;
    pos_out[j] = (float4)(fma(v.x, dt, p.x), fma(v.y, dt, p.y), fma(v.z, dt, p.z), p.w);
}

// Fallback for home particle h of a unit too dense to stage: the seed's gather loop.
static inline void update_fallback(int h, int h0, int len, int W, int x0, int cy, int cz, int mi, float L, float rcut2,
                                   float dt, uint mpc, __local const int* cst, __local const int* ccell,
                                   __global const float4* restrict pos_in, __global float4* restrict pos_out,
                                   __global const float4* restrict vel_in, __global float4* restrict vel_out,
                                   __global const uint* restrict cell_count, __global const uint* restrict cell_list)
{
    int hl = 0;
    while (hl + 1 < len && h0 + h >= cst[4 * W + hl + 2]) ++hl;
    const int cc = 4 * W + 1 + hl;
    const uint i = cell_list[(size_t)ccell[cc] * mpc + (uint)(h0 + h - cst[cc])];
    const float4 p = pos_in[i];
    const int cx = x0 + hl;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (int oz = -1; oz <= 1; ++oz)
        for (int oy = -1; oy <= 1; ++oy)
            for (int ox = -1; ox <= 1; ++ox) {
                const uint c = (uint)((wrap_cell(cz + oz, mi) * mi + wrap_cell(cy + oy, mi)) * mi + wrap_cell(cx + ox, mi));
                const uint count = min(cell_count[c], mpc);
                for (uint s = 0; s < count; ++s) {
                    const float4 q = pos_in[cell_list[(size_t)c * mpc + s]];
                    float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
                    dx -= L * rint(dx / L);  // minimum image
                    dy -= L * rint(dy / L);
                    dz -= L * rint(dz / L);
                    const float r2 = dx * dx + dy * dy + dz * dz;
                    if (r2 >= rcut2 || r2 <= 1e-12f) continue;
                    const float inv2 = 1.0f / r2, inv6 = inv2 * inv2 * inv2;
                    const float f = -24.0f * (2.0f * inv6 * inv6 - inv6) * inv2;
                    fx += f * dx;
                    fy += f * dy;
                    fz += f * dz;
                }
            }
    float4 v = vel_in[i];
    v.x += fx * dt;
    v.y += fy * dt;
    v.z += fz * dt;
    vel_out[i] = v;
    pos_out[i] = (float4)(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);
}

__kernel void lj_clear_cells(__global uint* cell_count, uint m3)
{
    const uint c = (uint)get_global_id(0);
    if (c < m3) cell_count[c] = 0u;
}

__kernel void lj_build_cells(__global const float4* restrict pos, __global uint* restrict cell_count,
                             __global uint* restrict cell_list, uint n, uint m, float L, uint max_per_cell)
{
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;  // the global size is rounded up to whole work-groups
    const float4 p = pos[i];
    const uint c = ((uint)cell_of(p.z, m, L) * m + (uint)cell_of(p.y, m, L)) * m + (uint)cell_of(p.x, m, L);
    const uint slot = atomic_inc(&cell_count[c]);
    if (slot < max_per_cell) cell_list[(size_t)c * max_per_cell + slot] = i;  // past the cap: dropped, but counted
}

__kernel void lj_step(__global const float4* restrict pos_in, __global float4* restrict pos_out,
                      __global const float4* restrict vel_in, __global float4* restrict vel_out,
                      __global const uint* restrict cell_count, __global const uint* restrict cell_list, uint n,
                      uint m, float L, float rcut2, float dt, uint max_per_cell)
{
    __local float4 rec[CAP];                  // staged neighbourhood: wrapped + shifted x, y, z
    __local uint recj[CAP];                   // particle index of each staged record
    __local float pfx[9 * HCAP], pfy[9 * HCAP], pfz[9 * HCAP];  // partial forces per (row, home particle)
    __local uchar hlof[HCAP];                 // home cell (0..len-1) of each home particle
    __local int scan_a[NSCAN], scan_b[NSCAN]; // prefix-sum ping-pong
    __local int cst[NCMAX + 1];               // exclusive prefix of the neighbourhood's cell counts
    __local int ccell[NCMAX];                 // cell index of each neighbourhood cell

    const int tid = (int)get_local_id(0);
    const int mi = (int)m;
    const float invL = 1.0f / L;      // for wrapping only (staged_coord corrects its rounding)
    const float cside = L / (float)m; // cell side, for the cell's lower edge
    const int nseg = (mi + SEG - 1) / SEG;
    const int nunits = nseg * mi * mi;
    const uint mpc = max_per_cell;

    for (int u = (int)get_group_id(0); u < nunits; u += (int)get_num_groups(0)) {
        const int seg = u % nseg, yz = u / nseg;
        const int cy = yz % mi, cz = yz / mi;
        const int x0 = seg * SEG;
        const int len = min(SEG, mi - x0);
        const int W = len + 2;       // cells per neighbourhood row: x0-1 .. x0+len
        const int ncell = 9 * W;     // row r = (dz+1)*3 + (dy+1); the home row is r = 4

        // Neighbourhood cells and their counts.
        if (tid < NSCAN) {
            int cnt = 0;
            if (tid < ncell) {
                const int r = tid / W, gi = tid - r * W;
                const int gx = x0 - 1 + gi, gy = cy + (r % 3) - 1, gz = cz + (r / 3) - 1;
                const int c = (wrap_cell(gz, mi) * mi + wrap_cell(gy, mi)) * mi + wrap_cell(gx, mi);
                ccell[tid] = c;
                cnt = (int)min(cell_count[c], mpc);
            }
            scan_a[tid] = cnt;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // Inclusive Hillis-Steele scan over the 64 slots, ping-pong between scan_a and scan_b,
        // written out round by round: no loop with a barrier inside the unit loop.
        SCAN_ROUND(1, scan_a, scan_b);
        SCAN_ROUND(2, scan_b, scan_a);
        SCAN_ROUND(4, scan_a, scan_b);
        SCAN_ROUND(8, scan_b, scan_a);
        SCAN_ROUND(16, scan_a, scan_b);
        SCAN_ROUND(32, scan_b, scan_a);
        // After 6 rounds (o = 1, 2, 4, 8, 16, 32) the inclusive sums are in scan_a.
        if (tid <= ncell) cst[tid] = tid == 0 ? 0 : scan_a[tid - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
        const int total = cst[ncell];
        const int h0 = cst[4 * W + 1];
        const int nh = cst[4 * W + len + 1] - h0;  // home particles: cells 1..len of row 4
        const bool staged = total <= CAP && nh <= HCAP;

        if (staged) {
            // Stage the neighbourhood: one cell per 16 work-items, slot l16 of it per work-item. All
            // index loads first, then all position gathers; slots 16.. of a cell (never at the
            // task's densities) follow in a plain loop.
            const int hw = tid >> 4, l16 = tid & 15;
            uint jr[ITER];
#pragma unroll
            for (int it = 0; it < ITER; ++it) {
                const int cc = hw + it * NHW;
                jr[it] = 0xffffffffu;
                if (cc < ncell && l16 < cst[cc + 1] - cst[cc]) jr[it] = cell_list[(size_t)ccell[cc] * mpc + (uint)l16];
            }
            float4 pr[ITER];
#pragma unroll
            for (int it = 0; it < ITER; ++it) {
                float4 v = (float4)(0.0f);
                if (jr[it] != 0xffffffffu) v = pos_in[jr[it]];
                pr[it] = v;
            }
#pragma unroll
            for (int it = 0; it < ITER; ++it) {
                const int cc = hw + it * NHW;
                if (cc < ncell) {
                    const int b0 = cst[cc], cnt = cst[cc + 1] - b0;
                    const int r = cc / W, gi = cc - r * W;
                    const int gx = x0 - 1 + gi, gy = cy + (r % 3) - 1, gz = cz + (r / 3) - 1;
                    const float lx = (float)wrap_cell(gx, mi) * cside, ly = (float)wrap_cell(gy, mi) * cside,
                                lz = (float)wrap_cell(gz, mi) * cside;
                    const float sx = image_shift(gx, mi, L), sy = image_shift(gy, mi, L), sz = image_shift(gz, mi, L);
                    const bool home = r == 4 && gi >= 1 && gi <= len;
                    for (int s = l16; s < cnt; s += 16) {
                        uint j;
                        float4 p;
                        if (s == l16) {
                            j = jr[it];
                            p = pr[it];
                        } else {
                            j = cell_list[(size_t)ccell[cc] * mpc + (uint)s];
                            p = pos_in[j];
                        }
                        rec[b0 + s] = (float4)(staged_coord(p.x, lx, sx, L, invL), staged_coord(p.y, ly, sy, L, invL),
                                               staged_coord(p.z, lz, sz, L, invL), 0.0f);
                        recj[b0 + s] = j;
                        if (home) hlof[b0 + s - h0] = (uchar)(gi - 1);
                    }
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // Items (row r, home particle hp), item k = r * nh + hp on work-item k % BLOCK.
        if (staged && nh > 0) {
            int hp = tid, r = 0;
            while (hp >= nh) hp -= nh, ++r;
            while (r < 9) {
                const float4 pi = rec[h0 + hp];
                const int hl = hlof[hp];
                const int a = cst[r * W + hl], b = cst[r * W + hl + 3];  // cells x-1, x, x+1 of row r
                float ax = 0.0f, ay = 0.0f, az = 0.0f;
                // Two candidates per iteration, unrolled by hand (the compiler may not unroll a
                // runtime-count loop in a kernel with barriers), then the odd one.
                int j = a;
                for (; j + 1 < b; j += 2) {
                    LJ_PAIR(rec[j]);
                    LJ_PAIR(rec[j + 1]);
                }
                if (j < b) LJ_PAIR(rec[j]);
                pfx[r * HCAP + hp] = ax;
                pfy[r * HCAP + hp] = ay;
                pfz[r * HCAP + hp] = az;
                hp += BLOCK;
                while (hp >= nh) hp -= nh, ++r;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // One loop over the home particles with the staged/fallback choice inside it: PoCL 5.0
        // aborts on an if/else whose two arms are each a loop between two barriers of the unit loop.
        for (int h = tid; h < nh; h += BLOCK) {
            if (staged)
                update_staged(h, h0, recj, pfx, pfy, pfz, pos_in, pos_out, vel_in, vel_out, dt);
            else
                update_fallback(h, h0, len, W, x0, cy, cz, mi, L, rcut2, dt, mpc, cst, ccell, pos_in, pos_out,
                                vel_in, vel_out, cell_count, cell_list);
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // the next unit reuses the local arrays
    }
}
