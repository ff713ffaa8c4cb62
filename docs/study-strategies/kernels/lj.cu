// Study copy of tasks/lj/best.cu for the strategy comparison (docs/study-strategies/README.md):
// the same kernel, its knob space cut or widened to BLOCK x PT x SEG = points so every task's space has 48.
// lj best-known kernels for the H200 (sm_90): Lennard-Jones MD with a cell list rebuilt every step
// (clear, build with atomic appends, step).
//
// What made it fast (lj_step; the clear and build kernels keep the seed's exact semantics and cost
// a few microseconds):
// - Cell-centric step: a block works on a "unit" of SEG = 4 consecutive cells along x (one row y, z)
//   and stages its whole neighbourhood (9 rows x (SEG + 2) cells, ~560 particles) in shared memory
//   once: half-warps copy one cell each (cell_list index, then the pos gather), so every position
//   is gathered ~13.5 times per step instead of ~280 times (once per candidate) as in the seed.
// - Each staged record is stored wrapped into [0, L) and shifted by the periodic image of its cell
//   relative to the unit (-L, 0 or +L per axis), so d = r_j - r_i is 3 FADD: no per-pair minimum
//   image (9 FP32 ops, 3 of them rounds) and no per-pair index load or global gather.
// - Work items are (home particle, neighbour row): the 3 cells of a row are contiguous in shared
//   memory, so an item is one flat loop over ~31 candidates; item k goes to lane k, so a warp's
//   lanes share the row and mostly the home cell: candidate reads are broadcasts and the loop trip
//   counts nearly agree. Partial forces meet in shared memory (float atomics, 3 per item).
// - Per candidate: LDS.128 + 3 FADD + 3 FP32 (r2) + 2 compares + (in range) MUFU.RCP and 9 FP32;
//   the reciprocal is rcp.approx.ftz (relative error ~1e-7, far inside the 1e-4 position tolerance).
// - Blocks loop over units (grid-stride), so the host's particle-based grid (per_thread = PT) only
//   sets how many blocks share the units. A unit whose neighbourhood exceeds the shared-memory
//   capacity (never at the task's densities) falls back to the seed's gather loop for its particles.
// Limits: the 27-cell stencil tests ~280 candidates per particle for ~43 within r_cut (6.5x); with
// a warp needing the force branch on nearly every candidate (some lane is in range), the step is
// bound by FP32 issue at ~20 instructions per candidate; the model credits 20 FLOP only per
// (ordered) pair within r_cut. Measured on the H200 (large profile, fraction of the measured
// 65.6 TFLOP/s FP32 static ceiling by that model): 0.012-0.020 (held-out 512000: 0.019), below
// the ~0.05-0.07 issue estimate: 448 us per step at N = 884736 (clear + build + step), about
// twice the issue-bound time (not profiled).
//
// kevo: tune BLOCK 128 256 64 512
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
#define CAP 1024                 // staged records per unit (a unit holds ~560 at the task's density)
#define HCAP 256                 // home particles per unit (~42)
#define NCMAX (9 * (SEG + 2))    // cells of a unit's neighbourhood
#define MINB (768 / BLOCK)             // blocks per SM the register budget is cut for (~80 registers)
#define NHW (BLOCK / 16)              // half-warps per block
#define ITER ((NCMAX + NHW - 1) / NHW) // neighbourhood cells per half-warp
#if NCMAX > 64
#error "SEG too large: the neighbourhood's prefix sum is one warp, 2 cells per lane"
#endif
#if BLOCK % 32 != 0 || BLOCK < NCMAX
#error "BLOCK must be a multiple of 32 and cover the neighbourhood's cells (one cell per thread)"
#endif

// Cell coordinate of one (unwrapped) position component: wrap into [0, L), then clamp against rounding.
__device__ __forceinline__ int cell_of(float x, unsigned m, float L)
{
    const float w = x - L * floorf(x / L);
    int c = (int)floorf(w * (float)m / L);
    return c < 0 ? 0 : (c >= (int)m ? (int)m - 1 : c);
}

__device__ __forceinline__ float rcp_approx(float x)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ int wrap_cell(int g, int m) { return g < 0 ? g + m : (g >= m ? g - m : g); }
__device__ __forceinline__ float image_shift(int g, int m, float L) { return g < 0 ? -L : (g >= m ? L : 0.0f); }

// One staged record: wrapped into [0, L), shifted by the cell's periodic image, index in w.
__device__ __forceinline__ void stage(float4* rec, unsigned char* hlof, int at, int h0, bool home, int gi, unsigned j,
                                      float4 p, float sx, float sy, float sz, float L, float invL)
{
    float4 w;
    w.x = fmaf(-L, floorf(p.x * invL), p.x) + sx;
    w.y = fmaf(-L, floorf(p.y * invL), p.y) + sy;
    w.z = fmaf(-L, floorf(p.z * invL), p.z) + sz;
    w.w = __int_as_float((int)j);
    rec[at] = w;
    if (home) hlof[at - h0] = (unsigned char)(gi - 1);
}

extern "C" __global__ void lj_clear_cells(unsigned* cell_count, unsigned m3)
{
    const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < m3) cell_count[c] = 0u;
}

extern "C" __global__ void lj_build_cells(const float4* pos, unsigned* cell_count, unsigned* cell_list, unsigned n, unsigned m, float L, unsigned max_per_cell)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;  // the grid is rounded up to whole blocks
    const float4 p = __ldg(pos + i);
    const unsigned c = ((unsigned)cell_of(p.z, m, L) * m + (unsigned)cell_of(p.y, m, L)) * m + (unsigned)cell_of(p.x, m, L);
    const unsigned slot = atomicAdd(&cell_count[c], 1u);
    if (slot < max_per_cell) cell_list[(size_t)c * max_per_cell + slot] = i;  // past the cap: dropped, but counted
}

extern "C" __global__ void __launch_bounds__(BLOCK, MINB) lj_step(const float4* pos_in, float4* pos_out, const float4* vel_in, float4* vel_out, const unsigned* cell_count, const unsigned* cell_list, unsigned n, unsigned m, float L, float rcut2, float dt, unsigned max_per_cell)
{
    __shared__ float4 rec[CAP];             // staged neighbourhood: wrapped + shifted x, y, z; w = index bits
    __shared__ float fxs[HCAP], fys[HCAP], fzs[HCAP];
    __shared__ unsigned char hlof[HCAP];    // home cell (0..len-1) of each home particle
    __shared__ int cst[NCMAX + 1];          // exclusive prefix of the neighbourhood's cell counts
    __shared__ int ccell[NCMAX];            // cell index of each neighbourhood cell

    const int tid = threadIdx.x;
    const int mi = (int)m;
    const float invL = rcp_approx(L);  // for wrapping only: any rounding of 1/L is consistent
    const int nseg = (mi + SEG - 1) / SEG;
    const int nunits = nseg * mi * mi;
    const unsigned mpc = max_per_cell;

    for (int u = blockIdx.x; u < nunits; u += gridDim.x) {
        const int seg = u % nseg, yz = u / nseg;
        const int cy = yz % mi, cz = yz / mi;
        const int x0 = seg * SEG;
        const int len = min(SEG, mi - x0);
        const int W = len + 2;       // cells per neighbourhood row: x0-1 .. x0+len
        const int ncell = 9 * W;     // row r = (dz+1)*3 + (dy+1); the home row is r = 4

        // Neighbourhood cells and their counts.
        if (tid < ncell) {
            const int r = tid / W, gi = tid - r * W;
            const int gx = x0 - 1 + gi, gy = cy + (r % 3) - 1, gz = cz + (r / 3) - 1;
            const int c = (wrap_cell(gz, mi) * mi + wrap_cell(gy, mi)) * mi + wrap_cell(gx, mi);
            ccell[tid] = c;
            cst[tid] = (int)min(__ldg(cell_count + c), mpc);
        }
        __syncthreads();
        // Exclusive prefix sum over <= 64 cells by warp 0 (2 cells per lane).
        if (tid < 32) {
            const int a = 2 * tid < ncell ? cst[2 * tid] : 0;
            const int b = 2 * tid + 1 < ncell ? cst[2 * tid + 1] : 0;
            int s = a + b;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const int t = __shfl_up_sync(0xffffffffu, s, o);
                if (tid >= o) s += t;
            }
            const int excl = s - a - b;
            if (2 * tid < ncell) cst[2 * tid] = excl;
            if (2 * tid + 1 < ncell) cst[2 * tid + 1] = excl + a;
            if (tid == 31) cst[ncell] = s;
        }
        __syncthreads();
        const int total = cst[ncell];
        const int h0 = cst[4 * W + 1];
        const int nh = cst[4 * W + len + 1] - h0;  // home particles: cells 1..len of row 4

        if (total <= CAP && nh <= HCAP) {
            // Stage the neighbourhood: one cell per half-warp, slot l16 of it per lane. All the
            // index loads are issued, then all the position gathers: two memory round trips per
            // unit instead of two per cell. Slots 16.. of a cell (never at the task's densities)
            // follow in a plain loop.
            const int hw = tid >> 4, l16 = tid & 15;
            unsigned jr[ITER];
#pragma unroll
            for (int it = 0; it < ITER; ++it) {
                const int cc = hw + it * NHW;
                jr[it] = 0xffffffffu;
                if (cc < ncell && l16 < cst[cc + 1] - cst[cc]) jr[it] = __ldg(cell_list + (size_t)ccell[cc] * mpc + l16);
            }
            float4 pr[ITER];
#pragma unroll
            for (int it = 0; it < ITER; ++it) {
                float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (jr[it] != 0xffffffffu) v = __ldg(pos_in + jr[it]);
                pr[it] = v;
            }
#pragma unroll
            for (int it = 0; it < ITER; ++it) {
                const int cc = hw + it * NHW;
                if (cc < ncell) {
                    const int b0 = cst[cc], cnt = cst[cc + 1] - b0;
                    const int r = cc / W, gi = cc - r * W;
                    const int gx = x0 - 1 + gi, gy = cy + (r % 3) - 1, gz = cz + (r / 3) - 1;
                    const float sx = image_shift(gx, mi, L), sy = image_shift(gy, mi, L), sz = image_shift(gz, mi, L);
                    const bool home = r == 4 && gi >= 1 && gi <= len;
                    if (l16 < cnt) stage(rec, hlof, b0 + l16, h0, home, gi, jr[it], pr[it], sx, sy, sz, L, invL);
                }
            }
            for (int cc = hw; cc < ncell; cc += NHW) {  // slots 16.. of crowded cells
                const int b0 = cst[cc], cnt = cst[cc + 1] - b0;
                if (cnt <= 16) continue;
                const int r = cc / W, gi = cc - r * W;
                const int gx = x0 - 1 + gi, gy = cy + (r % 3) - 1, gz = cz + (r / 3) - 1;
                const float sx = image_shift(gx, mi, L), sy = image_shift(gy, mi, L), sz = image_shift(gz, mi, L);
                const bool home = r == 4 && gi >= 1 && gi <= len;
                for (int s = l16 + 16; s < cnt; s += 16) {
                    const unsigned j = __ldg(cell_list + (size_t)ccell[cc] * mpc + s);
                    stage(rec, hlof, b0 + s, h0, home, gi, j, __ldg(pos_in + j), sx, sy, sz, L, invL);
                }
            }
            for (int h = tid; h < nh; h += BLOCK) fxs[h] = fys[h] = fzs[h] = 0.0f;
            __syncthreads();

            // Items (row r, home particle hp), item k = r * nh + hp on thread k % BLOCK.
            if (nh > 0) {
                int hp = tid, r = 0;
                while (hp >= nh) hp -= nh, ++r;
                while (r < 9) {
                    const float4 pi = rec[h0 + hp];
                    const int hl = hlof[hp];
                    const int a = cst[r * W + hl], b = cst[r * W + hl + 3];  // cells x-1, x, x+1 of row r
                    float ax = 0.0f, ay = 0.0f, az = 0.0f;
#pragma unroll 2
                    for (int j = a; j < b; ++j) {
                        const float4 q = rec[j];
                        const float dx = q.x - pi.x, dy = q.y - pi.y, dz = q.z - pi.z;
                        const float r2 = fmaf(dz, dz, fmaf(dy, dy, dx * dx));
                        // Branch-free: some lane of the warp is almost always in range, so a
                        // branch would not skip the force anyway. The select also discards the
                        // inf of j == i (r2 = 0).
                        const float a2 = rcp_approx(r2);                // r^-2
                        const float a6 = a2 * a2 * a2;                  // r^-6
                        const float f = (a6 * a2) * (a6 - 0.5f);        // (r^-14 - r^-8 / 2): F = -48 f d
                        const float fs = (r2 < rcut2 && r2 > 1e-12f) ? f : 0.0f;  // the latter skips j == i
                        ax = fmaf(fs, dx, ax);
                        ay = fmaf(fs, dy, ay);
                        az = fmaf(fs, dz, az);
                    }
                    atomicAdd(&fxs[hp], ax);
                    atomicAdd(&fys[hp], ay);
                    atomicAdd(&fzs[hp], az);
                    hp += BLOCK;
                    while (hp >= nh) hp -= nh, ++r;
                }
            }
            __syncthreads();

            // Symplectic Euler for the home particles.
            for (int h = tid; h < nh; h += BLOCK) {
                const unsigned j = (unsigned)__float_as_int(rec[h0 + h].w);
                const float4 p = __ldg(pos_in + j);
                float4 v = __ldg(vel_in + j);
                v.x = fmaf(-48.0f * fxs[h], dt, v.x);
                v.y = fmaf(-48.0f * fys[h], dt, v.y);
                v.z = fmaf(-48.0f * fzs[h], dt, v.z);
                vel_out[j] = v;
                pos_out[j] = make_float4(fmaf(v.x, dt, p.x), fmaf(v.y, dt, p.y), fmaf(v.z, dt, p.z), p.w);
            }
        } else {
            // Fallback (a neighbourhood too dense to stage): the seed's gather loop per home particle.
            for (int h = tid; h < nh; h += BLOCK) {
                int hl = 0;
                while (hl + 1 < len && h0 + h >= cst[4 * W + hl + 2]) ++hl;
                const int cc = 4 * W + 1 + hl;
                const unsigned i = __ldg(cell_list + (size_t)ccell[cc] * mpc + (h0 + h - cst[cc]));
                const float4 p = __ldg(pos_in + i);
                const int cx = x0 + hl;
                float fx = 0.0f, fy = 0.0f, fz = 0.0f;
                for (int oz = -1; oz <= 1; ++oz)
                    for (int oy = -1; oy <= 1; ++oy)
                        for (int ox = -1; ox <= 1; ++ox) {
                            const unsigned c = (unsigned)((wrap_cell(cz + oz, mi) * mi + wrap_cell(cy + oy, mi)) * mi + wrap_cell(cx + ox, mi));
                            const unsigned count = min(__ldg(cell_count + c), mpc);
                            for (unsigned s = 0; s < count; ++s) {
                                const float4 q = __ldg(pos_in + __ldg(cell_list + (size_t)c * mpc + s));
                                float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
                                dx = fmaf(-L, rintf(dx * invL), dx);  // minimum image
                                dy = fmaf(-L, rintf(dy * invL), dy);
                                dz = fmaf(-L, rintf(dz * invL), dz);
                                const float r2 = dx * dx + dy * dy + dz * dz;
                                if (r2 >= rcut2 || r2 <= 1e-12f) continue;
                                const float inv2 = rcp_approx(r2), inv6 = inv2 * inv2 * inv2;
                                const float f = -24.0f * (2.0f * inv6 * inv6 - inv6) * inv2;
                                fx += f * dx;
                                fy += f * dy;
                                fz += f * dz;
                            }
                        }
                float4 v = __ldg(vel_in + i);
                v.x += fx * dt;
                v.y += fy * dt;
                v.z += fz * dt;
                vel_out[i] = v;
                pos_out[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);
            }
        }
        __syncthreads();  // the next unit reuses the shared arrays
    }
}
