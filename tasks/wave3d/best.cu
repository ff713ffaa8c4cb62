// wave3d best-known kernel for the H200 (sm_90): one leapfrog step of the 3-D wave equation
// (7-point Laplacian, Dirichlet faces copy u_curr) per launch.
//
// WHAT MADE IT FAST
// - 2.5-D blocking: a thread owns 4 adjacent cells along x (one float4; a warp = 128 contiguous
//   cells = 512 B, LDG.128/STG.128) of one row y and marches over a chunk of PZ planes in z,
//   keeping u_curr of planes z-1, z, z+1 in registers: each u_curr value comes from DRAM once
//   per chunk (+2 halo planes per chunk, 2/PZ of the u_curr reads), u_prev and u_next are
//   streamed once: 12 B per cell, the model.
// - x-neighbours come from the adjacent lane's float4 by warp shuffle; only lanes 0 and 31 load
//   one extra float. y-neighbours (rows y-1, y+1 of plane z) are the rows the warps above and
//   below in the same block loaded one iteration earlier as their "z+1" plane, so they are L1
//   hits (L2 at the block's y edges); no shared memory, no __syncthreads, so warps drift freely
//   and hide each other's latency.
// - Per z step the four float4 loads (u_curr z+1, u_prev z, rows y+-1) are independent and
//   issued together; the loop is unrolled twice so the next plane's loads overlap the stores.
// - The z-chunk order alternates between launches (decided by the buffer addresses of u_curr
//   and u_next, which rotate), so that 2 of 3 launches start on the planes the previous launch
//   touched last and that still sit in the 60 MB L2. Knob REV=0 turns this off.
// - nx % 4 != 0 (rows not 16-byte aligned, e.g. 50) falls back to scalar loads/stores with the
//   same logic; all large sizes have nx % 4 == 0.
// Measured on the H200 (large profile, fraction of the measured 4333 GB/s static ceiling):
// 0.80-0.86 (0.802 at 384^3, 0.86 at 512x512x256 and 640x480x320, held-out 448x352x288: 0.808).
// Below the ~0.85-0.92 estimate at 384^3 and 448 wide (not profiled; likely a partial last wave,
// 3.27 waves of blocks at 384^3, and a half-idle warp in four on 448-cell rows).
// PZ=32 is the default: held-out 448x352x288x15 PZ=16 0.792, PZ=32 0.809, BY=4 0.792.
// kevo: tune BY 8 4 16
// kevo: tune PZ 32 16 8 64
// kevo: tune REV 1 0
// kevo: launch wave_step block=32,BY,1 per_thread=4,1,PZ
#ifndef BY
#define BY 8
#endif
#ifndef PZ
#define PZ 32
#endif
#ifndef REV
#define REV 1
#endif

// Loads cells x0..x0+3 of the row starting at `base`; cells at or past nx read as 0 (unused).
__device__ __forceinline__ float4 load4(const float* __restrict__ u, size_t base, unsigned x0, unsigned nx, bool vec)
{
    if (vec) return __ldg(reinterpret_cast<const float4*>(u + base + x0));
    float4 v;
    v.x = x0 + 0u < nx ? __ldg(u + base + x0 + 0u) : 0.0f;
    v.y = x0 + 1u < nx ? __ldg(u + base + x0 + 1u) : 0.0f;
    v.z = x0 + 2u < nx ? __ldg(u + base + x0 + 2u) : 0.0f;
    v.w = x0 + 3u < nx ? __ldg(u + base + x0 + 3u) : 0.0f;
    return v;
}

extern "C" __global__ void __launch_bounds__(32 * BY, 1024 / (32 * BY)) wave_step(const float* __restrict__ u_prev, const float* __restrict__ u_curr, float* __restrict__ u_next, unsigned nx, unsigned ny, unsigned nz, float alpha)
{
    const unsigned lane = threadIdx.x & 31u;  // blockDim.x == 32: a warp is one row segment
    const unsigned x0 = 4u * (blockIdx.x * blockDim.x + threadIdx.x);
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned bz = blockIdx.z;
#if REV
    if (u_curr > u_next) bz = gridDim.z - 1u - bz;  // alternate the sweep direction
#endif
    const unsigned chunk = (nz + gridDim.z - 1u) / gridDim.z;  // <= PZ with the declared geometry
    const unsigned z0 = bz * chunk;
    if (y >= ny || z0 >= nz) return;  // whole warp (y and z0 are the same for all its lanes)
    const unsigned z1 = min(z0 + chunk, nz);
    const bool act = x0 < nx;
    const bool vec = (nx & 3u) == 0u;
    const size_t sy = nx, sz = (size_t)nx * ny;
    const bool yin = y >= 1u && y + 1u < ny;  // interior row
    const unsigned last = nx - 1u;

    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    size_t base = (size_t)z0 * sz + (size_t)y * sy;  // row (y, z) start
    float4 cm = zero, cc = zero;
    if (act && z0 >= 1u) cm = load4(u_curr, base - sz, x0, nx, vec);
    if (act) cc = load4(u_curr, base, x0, nx, vec);

#pragma unroll 2
    for (unsigned z = z0; z < z1; ++z, base += sz) {
        float4 cp = zero;
        if (act && z + 1u < nz) cp = load4(u_curr, base + sz, x0, nx, vec);
        float4 o = cc;  // faces copy u_curr
        if (yin && z >= 1u && z + 1u < nz) {  // warp-uniform
            float4 ym = zero, yp = zero, pv = zero;
            if (act) {
                ym = load4(u_curr, base - sy, x0, nx, vec);
                yp = load4(u_curr, base + sy, x0, nx, vec);
                pv = load4(u_prev, base, x0, nx, vec);
            }
            float left = __shfl_up_sync(0xffffffffu, cc.w, 1);
            float right = __shfl_down_sync(0xffffffffu, cc.x, 1);
            if (lane == 0u && act && x0 >= 1u) left = __ldg(u_curr + base + x0 - 1u);
            if (lane == 31u && x0 + 4u < nx) right = __ldg(u_curr + base + x0 + 4u);
            const float l0 = left + cc.y + ym.x + yp.x + cm.x + cp.x - 6.0f * cc.x;
            const float l1 = cc.x + cc.z + ym.y + yp.y + cm.y + cp.y - 6.0f * cc.y;
            const float l2 = cc.y + cc.w + ym.z + yp.z + cm.z + cp.z - 6.0f * cc.z;
            const float l3 = cc.z + right + ym.w + yp.w + cm.w + cp.w - 6.0f * cc.w;
            if (x0 >= 1u && x0 < last) o.x = 2.0f * cc.x - pv.x + alpha * l0;
            if (x0 + 1u < last) o.y = 2.0f * cc.y - pv.y + alpha * l1;
            if (x0 + 2u < last) o.z = 2.0f * cc.z - pv.z + alpha * l2;
            if (x0 + 3u < last) o.w = 2.0f * cc.w - pv.w + alpha * l3;
        }
        if (act) {
            if (vec) {
                *reinterpret_cast<float4*>(u_next + base + x0) = o;
            } else {
                u_next[base + x0] = o.x;
                if (x0 + 1u < nx) u_next[base + x0 + 1u] = o.y;
                if (x0 + 2u < nx) u_next[base + x0 + 2u] = o.z;
                if (x0 + 3u < nx) u_next[base + x0 + 3u] = o.w;
            }
        }
        cm = cc;
        cc = cp;
    }
}
