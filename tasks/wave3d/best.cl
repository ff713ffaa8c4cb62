// wave3d best-known OpenCL kernel: an OpenCL C 1.2 port of tasks/wave3d/best.cu (one leapfrog
// step of the 3-D wave equation, 7-point Laplacian, Dirichlet faces copy u_curr, per launch).
//
// WHAT MAKES IT FAST (the ideas of best.cu, in OpenCL C)
// - 2.5-D blocking: a work-item owns 4 adjacent cells along x (one float4: vload4/vstore4,
//   16-byte accesses; a row of 32 work-items = 128 contiguous cells = 512 B) of one row y and
//   marches over a chunk of up to PZ planes in z, keeping u_curr of planes z-1, z, z+1 in
//   registers: each u_curr value is read once per chunk (+2 halo planes per chunk), u_prev and
//   u_next are streamed once: 12 B per cell, the model.
// - Software pipelining (what best.cu got from unrolling its z loop twice): the u_curr plane
//   z+2 and the u_prev plane z+1 are loaded one iteration ahead, so the next plane's loads are
//   in flight while the current plane is computed and stored; within an iteration every load
//   (halo rows and row ends included) is issued before the barrier and the arithmetic.
// - Neighbours in x and y: where best.cu used warp shuffles (x) and L1 hits on the rows its
//   neighbouring warps had loaded (y), each work-item publishes its float4 of plane z in a
//   double-buffered local tile [2][BY][32] float4 (16 KB at most, BY=16); one
//   barrier(CLK_LOCAL_MEM_FENCE) per plane, and the double buffer makes a second barrier
//   unnecessary. Only the work-group's edges read global memory: rows y-1 / y+1 for the first /
//   last row of the work-group, and one float per row at the x edges.
// - The z-chunk order alternates between launches (REV=1; decided by the addresses of u_curr and
//   u_next, which rotate), so most launches start on the planes the previous launch touched
//   last (still in the GPU's L2). REV=0: plain order. Each launch still computes one step.
// - nx % 4 != 0 (rows not 16-byte aligned, e.g. 50) falls back to scalar loads/stores with the
//   same logic. The z loop bounds depend only on the work-group, so every work-item of a group
//   reaches every barrier; out-of-range work-items load and store nothing. alpha is read from
//   the parameter; u_next is never read, u_prev and u_curr never written.
//
// CHECKED (kevo snapshot binary on PoCL, a 2-core CPU: kevo eval wave3d best.cl --backend opencl
// --sizes all --check-only): verdict ok at every size, held-out included, at --profile small
// (32^3x20, 48x40x36x15, 72x64x56x10, held-out 50x44x38x12: nx % 4 != 0, the scalar path),
// paper (64^3x30, 160^3x20, 192^3x15, held-out 128^3x20) and large (384^3x20, 512x512x256x20,
// 640x480x320x10, held-out 448x352x288x15). Small profile also ok with -D BY=4 PZ=16 REV=0,
// BY=16 PZ=64, BY=16 PZ=8 REV=0, BY=4 PZ=64, BY=8 PZ=8. A standalone PoCL harness against a
// double-precision CPU reference (all 24 knob combinations x sizes 1x2x1, 3x3x3, 5x3x4, 7x9x11,
// 33x17x40, 36x20x65, 50x44x38, 130x19x70, 7 steps so REV flips): all ok.
// The z-chunk loop runs zero iterations for a group past the last plane (no early return before
// its barrier, for PoCL 5's work-group generator).
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture; every other implementation gets
// the GPU path above). A group's block of 4*BX cells x BY rows x PZ planes is BY*PZ rows;
// work-item t takes rows t, t + BX*BY, ... as one plain loop each, which the compiler
// vectorises; no local memory, no barrier. The GPU path was 10-100x slower than the seed on
// PoCL 3.1 (a barrier per plane); this path is about as fast as the seed (docs/best-kernels.md).
// The launch geometry is the GPU path's on both paths (the host reads one set of directives).
// PoCL runs a work-group as loops over its work-items, split at every barrier, and vectorises
// such a loop only when a work-item's code has no loop of its own.
// The CHECKED list above is the GPU path's (PATH=gpu).
// kevo: tune PATH auto gpu cpu
// kevo: tune BY 8 4 16
// kevo: tune PZ 32 16 8 64
// kevo: tune REV 1 0
// kevo: launch wave_step block=32,BY,1 per_thread=4,1,PZ
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
#ifndef BY
#define BY 8
#endif
#ifndef PZ
#define PZ 32
#endif
#ifndef REV
#define REV 1
#endif
#define BX 32

// Loads cells x0..x0+3 of the row starting at `base`; cells at or past nx read as 0 (unused).
// With vec, base and x0 are multiples of 4 (nx % 4 == 0).
float4 load4(__global const float* restrict u, size_t base, uint x0, uint nx, int vec)
{
    if (vec) return vload4((base + x0) >> 2, u);
    float4 v;
    v.x = x0 + 0u < nx ? u[base + x0 + 0u] : 0.0f;
    v.y = x0 + 1u < nx ? u[base + x0 + 1u] : 0.0f;
    v.z = x0 + 2u < nx ? u[base + x0 + 2u] : 0.0f;
    v.w = x0 + 3u < nx ? u[base + x0 + 3u] : 0.0f;
    return v;
}

#if CPU_PATH
// The CPU path: a work-group's block is 4*BX cells by BY rows by PZ planes (the GPU path's
// geometry), i.e. BY*PZ rows of 4*BX cells, one per work-item (BX*BY work-items, so each takes
// PZ/BX of them), as one plain loop over the row that the compiler vectorises (PoCL vectorises
// loops over work-items only when a work-item's code has no loop of its own). No barrier.
__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void wave_step(__global const float* restrict u_prev, __global const float* restrict u_curr, __global float* restrict u_next,
               uint nx, uint ny, uint nz, float alpha)
{
    const int t = (int)(get_local_id(1) * BX + get_local_id(0));
    const int w = (int)nx, h = (int)ny, d = (int)nz;
    const int xs = (int)get_group_id(0) * (4 * BX);
    const int xe = min(xs + 4 * BX, w);
    const size_t sy = nx, sz = (size_t)nx * ny;
    for (int r = t; r < BY * PZ; r += BX * BY) {
        const int y = (int)get_group_id(1) * BY + r % BY;
        const int z = (int)get_group_id(2) * PZ + r / BY;
        if (y >= h || z >= d || xs >= w) continue;
        const size_t row = (size_t)z * sz + (size_t)y * sy;
        __global const float* c = u_curr + row;
        __global float* o = u_next + row;
        if (y == 0 || z == 0 || y + 1 == h || z + 1 == d) {  // face rows copy u_curr
            for (int x = xs; x < xe; ++x) o[x] = c[x];
            continue;
        }
        __global const float* pv = u_prev + row;
        __global const float* ym = c - sy;
        __global const float* yp = c + sy;
        __global const float* zm = c - sz;
        __global const float* zp = c + sz;
        for (int x = max(xs, 1); x < min(xe, w - 1); ++x)
            o[x] = 2.0f * c[x] - pv[x] + alpha * (c[x - 1] + c[x + 1] + ym[x] + yp[x] + zm[x] + zp[x] - 6.0f * c[x]);
        if (xs == 0) o[0] = c[0];
        if (xe == w) o[w - 1] = c[w - 1];
    }
}
#else
__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void wave_step(__global const float* restrict u_prev, __global const float* restrict u_curr, __global float* restrict u_next,
               uint nx, uint ny, uint nz, float alpha)
{
    __local float4 tile[2][BY][BX];  // u_curr of plane z, double-buffered by z parity

    const uint lx = (uint)get_local_id(0);
    const uint ly = (uint)get_local_id(1);
    const uint x0 = 4u * ((uint)get_group_id(0) * BX + lx);
    const uint y = (uint)get_group_id(1) * BY + ly;
    const uint ngz = (uint)get_num_groups(2);
    uint bz = (uint)get_group_id(2);
#if REV
    if (u_curr > u_next) bz = ngz - 1u - bz;  // alternate the sweep direction
#endif
    const uint chunk = (nz + ngz - 1u) / ngz;  // <= PZ with the declared geometry
    const uint z0 = min(bz * chunk, nz);
    const uint z1 = min(z0 + chunk, nz);  // no planes left: no iterations (no return before the barrier)
    const int act = x0 < nx && y < ny;  // this work-item owns cells
    const int vec = (nx & 3u) == 0u;
    const size_t sy = nx, sz = (size_t)nx * ny;
    const int yin = y >= 1u && y + 1u < ny;  // interior row
    const int upd_row = act && yin;           // cells of this row may be updated
    const uint last = nx - 1u;

    const float4 zero = (float4)(0.0f);
    size_t base = (size_t)z0 * sz + (size_t)y * sy;  // row (y, z) start
    float4 cm = zero, cc = zero, cp = zero, pv = zero;
    if (act && z0 >= 1u) cm = load4(u_curr, base - sz, x0, nx, vec);
    if (act) cc = load4(u_curr, base, x0, nx, vec);
    if (act && z0 + 1u < nz) cp = load4(u_curr, base + sz, x0, nx, vec);
    if (upd_row && z0 >= 1u && z0 + 1u < nz) pv = load4(u_prev, base, x0, nx, vec);

    for (uint z = z0; z < z1; ++z, base += sz) {
        const int zin = z >= 1u && z + 1u < nz;  // work-group uniform
        const int upd = upd_row && zin;
        // Loads for the next plane (u_curr z+2, u_prev z+1), one iteration ahead.
        float4 ncp = zero, npv = zero;
        if (act && z + 1u < z1 && z + 2u < nz) ncp = load4(u_curr, base + 2u * sz, x0, nx, vec);
        if (upd_row && z + 1u < z1 && z + 2u < nz) npv = load4(u_prev, base + sz, x0, nx, vec);
        float4 ym = zero, yp = zero;
        float left = 0.0f, right = 0.0f;
        // Loads that only the work-group's edges need for plane z.
        if (upd) {
            if (ly == 0u) ym = load4(u_curr, base - sy, x0, nx, vec);
            if (ly == BY - 1u) yp = load4(u_curr, base + sy, x0, nx, vec);
            if (lx == 0u && x0 >= 1u) left = u_curr[base + x0 - 1u];
            if (lx == BX - 1u && x0 + 4u < nx) right = u_curr[base + x0 + 4u];
        }
        // Publish plane z; the other half of the tile is still being read for plane z-1 by
        // work-items that have not reached this barrier, hence the double buffer.
        tile[z & 1u][ly][lx] = cc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (upd) {
            if (ly > 0u) ym = tile[z & 1u][ly - 1u][lx];
            if (ly < BY - 1u) yp = tile[z & 1u][ly + 1u][lx];
            if (lx > 0u) left = tile[z & 1u][ly][lx - 1u].w;
            if (lx < BX - 1u) right = tile[z & 1u][ly][lx + 1u].x;
        }

        float4 o = cc;  // faces copy u_curr
        if (upd) {
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
                vstore4(o, (base + x0) >> 2, u_next);
            } else {
                u_next[base + x0] = o.x;
                if (x0 + 1u < nx) u_next[base + x0 + 1u] = o.y;
                if (x0 + 2u < nx) u_next[base + x0 + 2u] = o.z;
                if (x0 + 3u < nx) u_next[base + x0 + 3u] = o.w;
            }
        }
        cm = cc;
        cc = cp;
        cp = ncp;
        pv = npv;
    }
}
#endif
