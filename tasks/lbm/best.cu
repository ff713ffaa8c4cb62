// lbm best-known kernel for the H200: D2Q9 pull streaming + BGK collision, one time step per launch.
//
// WHAT MADE IT FAST
// - The step moves 72 B per cell (9 floats in, 9 out) and does ~70 FLOP, so it is purely DRAM-bound;
//   the whole job is to keep the memory system saturated with perfectly coalesced traffic.
// - One thread per cell along x, consecutive threads on consecutive x: each of the 9 SoA planes is
//   read and written as contiguous 128 B warp segments. The +-1 shifted pulls touch one extra
//   sector per warp that L1/L2 already hold (the neighbouring warp reads it), so DRAM sees each
//   byte once.
// - RY cells along y per thread, all 9*RY loads issued before any arithmetic (the loads use clamped,
//   always-valid addresses, so the compiler hoists them): 36 independent 4-byte loads per thread in
//   flight -> enough memory-level parallelism to cover DRAM latency at moderate occupancy.
// - Everything lives in registers; no shared memory, no wrap arithmetic per population (the three
//   row offsets and three column indices are computed once per cell), 1/tau and 1/rho computed once.
// - __restrict__ const input (read-only path), plain stores (the next step re-reads them).
// Measured on the H200 (large profile, fraction of the measured 4333 GB/s static ceiling):
// 0.855-0.894 (held-out 2560x1920x15: 0.875), as estimated for a copy-like kernel with 9 read and
// 9 write streams (the shifted reads cost L1/L2 traffic, not DRAM traffic).
// kevo: tune BX 128 64 256 32
// kevo: tune BY 1 2 4
// kevo: tune RY 4 2 8 1
// kevo: launch lbm_step block=BX,BY per_thread=1,RY
#ifndef BX
#define BX 128
#endif
#ifndef BY
#define BY 1
#endif
#ifndef RY
#define RY 4
#endif

extern "C" __global__ void __launch_bounds__(BX * BY) lbm_step(const float* __restrict__ f_in, float* __restrict__ f_out,
                                                                unsigned nx, unsigned ny, float tau)
{
    const unsigned i = blockIdx.x * BX + threadIdx.x;
    if (i >= nx) return;  // the grid is rounded up to whole blocks
    const unsigned jb = (blockIdx.y * BY + threadIdx.y) * RY;  // first of this thread's RY rows
    if (jb >= ny) return;
    const size_t plane = (size_t)nx * ny;
    const unsigned im = i == 0 ? nx - 1 : i - 1;   // periodic x neighbours
    const unsigned ip = i + 1 == nx ? 0 : i + 1;
    const float omega = 1.0f / tau;

    float f[RY][9];
    // Phase 1: every load of every row first (maximum memory-level parallelism). Rows past ny are
    // clamped to a valid row; their results are discarded below.
#pragma unroll
    for (int r = 0; r < RY; ++r) {
        const unsigned j = min(jb + r, ny - 1);
        const unsigned jm = j == 0 ? ny - 1 : j - 1;  // source row for c_y = +1
        const unsigned jp = j + 1 == ny ? 0 : j + 1;  // source row for c_y = -1
        const unsigned oc = j * nx, om = jm * nx, op = jp * nx;
        f[r][0] = f_in[oc + i];
        f[r][1] = f_in[plane + oc + im];            // (cx,cy) = ( 1, 0): from (i-1, j)
        f[r][2] = f_in[2 * plane + om + i];         // ( 0, 1): from (i, j-1)
        f[r][3] = f_in[3 * plane + oc + ip];        // (-1, 0): from (i+1, j)
        f[r][4] = f_in[4 * plane + op + i];         // ( 0,-1): from (i, j+1)
        f[r][5] = f_in[5 * plane + om + im];        // ( 1, 1): from (i-1, j-1)
        f[r][6] = f_in[6 * plane + om + ip];        // (-1, 1): from (i+1, j-1)
        f[r][7] = f_in[7 * plane + op + ip];        // (-1,-1): from (i+1, j+1)
        f[r][8] = f_in[8 * plane + op + im];        // ( 1,-1): from (i-1, j+1)
    }
    // Phase 2: moments, BGK collision, coalesced stores.
#pragma unroll
    for (int r = 0; r < RY; ++r) {
        const unsigned j = jb + r;
        if (j >= ny) break;
        const float f0 = f[r][0], f1 = f[r][1], f2 = f[r][2], f3 = f[r][3], f4 = f[r][4];
        const float f5 = f[r][5], f6 = f[r][6], f7 = f[r][7], f8 = f[r][8];
        const float rho = ((f0 + f1) + (f2 + f3)) + ((f4 + f5) + (f6 + f7)) + f8;
        const float inv_rho = 1.0f / rho;
        const float ux = ((f1 - f3) + (f5 - f6) + (f8 - f7)) * inv_rho;
        const float uy = ((f2 - f4) + (f5 + f6) - (f7 + f8)) * inv_rho;
        const float base = 1.0f - 1.5f * (ux * ux + uy * uy);
        const float wr0 = (4.0f / 9.0f) * rho, wr1 = (1.0f / 9.0f) * rho, wr5 = (1.0f / 36.0f) * rho;
        // For a pair of opposite velocities (cu, -cu): feq = w rho (base + 4.5 cu^2 +- 3 cu).
        const float cu5 = ux + uy, cu6 = uy - ux;
        const float sx = base + 4.5f * ux * ux, sy = base + 4.5f * uy * uy;
        const float s5 = base + 4.5f * cu5 * cu5, s6 = base + 4.5f * cu6 * cu6;
        const float e0 = wr0 * base;
        const float e1 = wr1 * (sx + 3.0f * ux), e3 = wr1 * (sx - 3.0f * ux);
        const float e2 = wr1 * (sy + 3.0f * uy), e4 = wr1 * (sy - 3.0f * uy);
        const float e5 = wr5 * (s5 + 3.0f * cu5), e7 = wr5 * (s5 - 3.0f * cu5);
        const float e6 = wr5 * (s6 + 3.0f * cu6), e8 = wr5 * (s6 - 3.0f * cu6);
        float* o = f_out + (size_t)j * nx + i;
        o[0] = f0 + omega * (e0 - f0);
        o[plane] = f1 + omega * (e1 - f1);
        o[2 * plane] = f2 + omega * (e2 - f2);
        o[3 * plane] = f3 + omega * (e3 - f3);
        o[4 * plane] = f4 + omega * (e4 - f4);
        o[5 * plane] = f5 + omega * (e5 - f5);
        o[6 * plane] = f6 + omega * (e6 - f6);
        o[7 * plane] = f7 + omega * (e7 - f7);
        o[8 * plane] = f8 + omega * (e8 - f8);
    }
}
