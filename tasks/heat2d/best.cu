// heat2d best-known kernel for the H200 (sm_90): one explicit 5-point heat step per launch.
//
// WHAT MADE IT FAST
// - Each cell of u_in comes from DRAM once per step (8 B/cell model): a thread owns 4 adjacent
//   cells along x (one float4, LDG.128/STG.128, a warp = 128 contiguous cells = 512 B) and PY
//   consecutive rows, holding rows y0-1 .. y0+PY in registers, so the y-neighbours are
//   registers; only the 2 halo rows per PY rows are re-read (L1/L2 hits).
// - x-neighbours come from the adjacent lane's float4 by warp shuffle (.w to the right, .x to
//   the left); only lanes 0 and 31 load one extra float (an L1/L2 hit).
// - All PY+2 row loads of a thread are issued before the first store (fully unrolled,
//   const __restrict__ input): 160 B in flight per thread at PY = 8, enough for Little's law.
// - Sweep direction alternates between launches (the ping-pong order of the two buffer
//   addresses decides it): a step that walks the rows bottom-up starts on the rows that the
//   previous (top-down) step wrote last and that still sit in the 60 MB L2, and vice versa.
//   At 4096^2 (64 MB per buffer) that turns a large part of the reads into L2 hits.
//   Knob REV=0 turns this off (plain top-down order).
// - nx % 4 != 0 (rows not 16-byte aligned) falls back to 4 scalar loads/stores per thread with
//   the same shuffle logic; every size in the profiles has nx % 4 == 0.
// Measured on the H200 (large profile, fraction of the measured 4333 GB/s static ceiling):
// 0.851-0.913 (0.852 at 4096^2, 0.913 at 8192^2, held-out 5000x3000: 0.851). Below the ~0.88-0.95
// estimate at the smaller sizes: the direction alternation did not push the figure towards 1.
// kevo: tune BY 4 8 2
// kevo: tune PY 8 4 16
// kevo: tune REV 1 0
// kevo: launch heat_step block=32,BY per_thread=4,PY
#ifndef BY
#define BY 4
#endif
#ifndef PY
#define PY 8
#endif
#ifndef REV
#define REV 1
#endif

// Loads the 4 cells (c0..c0+3) of row `row`; cells at or past nx read as 0 (never used).
__device__ __forceinline__ float4 load4(const float* __restrict__ u, size_t row_base, unsigned c0, unsigned nx, bool vec)
{
    if (vec) return __ldg(reinterpret_cast<const float4*>(u + row_base + c0));
    float4 v;
    v.x = c0 + 0 < nx ? __ldg(u + row_base + c0 + 0) : 0.0f;
    v.y = c0 + 1 < nx ? __ldg(u + row_base + c0 + 1) : 0.0f;
    v.z = c0 + 2 < nx ? __ldg(u + row_base + c0 + 2) : 0.0f;
    v.w = c0 + 3 < nx ? __ldg(u + row_base + c0 + 3) : 0.0f;
    return v;
}

extern "C" __global__ void __launch_bounds__(32 * BY) heat_step(const float* __restrict__ u_in, float* __restrict__ u_out, unsigned nx, unsigned ny, float alpha)
{
    const unsigned lane = threadIdx.x & 31u;  // blockDim.x == 32: a warp is one row segment
    const unsigned c0 = 4u * (blockIdx.x * blockDim.x + threadIdx.x);
    unsigned by = blockIdx.y;
#if REV
    if (u_in > u_out) by = gridDim.y - 1u - by;  // alternate the sweep direction step by step
#endif
    const unsigned y0 = (by * blockDim.y + threadIdx.y) * PY;
    if (y0 >= ny) return;  // whole warp (same y0 for all its lanes)
    const bool act = c0 < nx;                          // this lane owns cells
    const bool vec = (nx & 3u) == 0u;                  // float4 path: rows 16-byte aligned
    const bool full = vec || c0 + 3u < nx;             // all 4 cells inside the row

    // All PY+2 rows (y0-1 .. y0+PY) are loaded up front into registers, so every load of the
    // thread is in flight before the first store; rows outside [0, ny) read as 0 (never used).
    float4 r[PY + 2];
#pragma unroll
    for (int k = 0; k < PY + 2; ++k) {
        const unsigned yy = y0 + k - 1u;  // wraps to a huge value for y0 == 0, k == 0
        r[k] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (act && yy < ny) r[k] = load4(u_in, (size_t)yy * nx, c0, nx, vec);
    }

#pragma unroll
    for (int k = 0; k < PY; ++k) {
        const unsigned y = y0 + k;
        if (y >= ny) break;  // warp-uniform
        const float4 a = r[k], b = r[k + 1], c = r[k + 2];
        const size_t row = (size_t)y * nx;

        // x-neighbours: lane-1's last cell and lane+1's first cell; warp edges load one float.
        float left = __shfl_up_sync(0xffffffffu, b.w, 1);
        float right = __shfl_down_sync(0xffffffffu, b.x, 1);
        if (lane == 0u && act && c0 >= 1u) left = __ldg(u_in + row + c0 - 1u);
        if (lane == 31u && c0 + 4u < nx) right = __ldg(u_in + row + c0 + 4u);

        if (act) {
            float4 o = b;  // boundary cells copy u_in
            if (y >= 1u && y + 1u < ny) {
                // interior row: update the cells with 0 < x < nx-1
                const float n0 = b.x + alpha * (left + b.y + a.x + c.x - 4.0f * b.x);
                const float n1 = b.y + alpha * (b.x + b.z + a.y + c.y - 4.0f * b.y);
                const float n2 = b.z + alpha * (b.y + b.w + a.z + c.z - 4.0f * b.z);
                const float n3 = b.w + alpha * (b.z + right + a.w + c.w - 4.0f * b.w);
                const unsigned last = nx - 1u;
                if (c0 + 0u >= 1u && c0 + 0u < last) o.x = n0;
                if (c0 + 1u < last) o.y = n1;
                if (c0 + 2u < last) o.z = n2;
                if (c0 + 3u < last) o.w = n3;
            }
            if (full && vec) {
                *reinterpret_cast<float4*>(u_out + row + c0) = o;
            } else {
                u_out[row + c0] = o.x;
                if (c0 + 1u < nx) u_out[row + c0 + 1u] = o.y;
                if (c0 + 2u < nx) u_out[row + c0 + 2u] = o.z;
                if (c0 + 3u < nx) u_out[row + c0 + 3u] = o.w;
            }
        }
    }
}
