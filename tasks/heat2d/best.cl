// heat2d best-known OpenCL kernel: an OpenCL C 1.2 port of tasks/heat2d/best.cu (one explicit
// 5-point heat step per launch, Dirichlet boundary copies u_in).
//
// WHAT MAKES IT FAST (the ideas of best.cu, in OpenCL C)
// - A work-item owns 4 adjacent cells along x (one float4: vload4/vstore4, 16-byte accesses;
//   a row of 32 work-items = 128 contiguous cells = 512 B) and PY consecutive rows. It loads
//   rows y0-1 .. y0+PY into registers, all PY+2 loads issued before any arithmetic, so the
//   y-neighbours are registers and each cell of u_in is read from memory once per step (only
//   2 halo rows per PY rows are re-read, cache hits).
// - x-neighbours: where best.cu used warp shuffles, each work-item publishes the first and last
//   cell of each of its rows in local memory; one barrier(CLK_LOCAL_MEM_FENCE) per launch, then
//   it reads its left/right neighbour's cell. Only the work-items at the work-group's x edges
//   load one extra float per row from global memory (issued with the row loads, before the
//   barrier). Local memory: 2*PY*32*BY floats (32 KB at most, PY=16 BY=8).
// - Sweep direction alternates between launches (REV=1): the ping-pong order of the two buffer
//   addresses decides it, so a step starts on the rows the previous step wrote last (still in
//   the GPU's L2). REV=0: plain top-down order. Each launch still computes exactly one step.
// - nx % 4 != 0 (rows not 16-byte aligned) falls back to 4 scalar loads/stores per work-item
//   with the same logic. No work-item returns before the barrier; out-of-range ones just
//   load and store nothing. alpha is read from the parameter; u_out is never read.
//
// CHECKED (kevo snapshot binary on PoCL, a 2-core CPU: kevo eval heat2d best.cl --backend opencl
// --sizes all --check-only): verdict ok at every size, held-out included, at --profile small
// (64x64x10, 96x80x10, 128x128x20, held-out 100x75x15), paper (256x256x50, 512x512x100,
// 1024x1024x50, held-out 768x768x75) and large (4096x4096x20, 8192x8192x10, 6144x4096x20,
// held-out 5000x3000x20). Small profile also ok with -D BY=8 PY=16 REV=0, BY=2 PY=4, BY=8 PY=4,
// BY=2 PY=16 REV=0, REV=0. A standalone PoCL harness against a double-precision CPU reference
// (all 18 knob combinations x sizes 1x1, 3x3, 5x3, 7x9, 2x40, 33x17, 129x70, 130x131, 256x64,
// so the scalar nx % 4 != 0 path and partial tiles are exercised): all ok.
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture; every other implementation gets
// the GPU path above). Work-item t < BY*PY of a group takes row t of the group's
// 4*BX x BY*PY tile as one plain loop over its interior, which the compiler vectorises; no local
// memory, no barrier. The GPU path was 5x slower than the seed on PoCL 3.1 (its barrier and
// float4 layout), this path is about as fast as the seed or faster (docs/best-kernels.md).
// The launch geometry is the GPU path's on both paths (the host reads one set of directives).
// PoCL runs a work-group as loops over its work-items, split at every barrier, and vectorises
// such a loop only when a work-item's code has no loop of its own.
// The CHECKED list above is the GPU path's (PATH=gpu); both paths are checked at the small
// profile by Bench.EveryOpenclBestKnownKernelIsCorrectOnThisDevice (the CPU path) and by hand.
// kevo: tune PATH auto gpu cpu
// kevo: tune BY 4 8 2
// kevo: tune PY 8 4 16
// kevo: tune REV 1 0
// kevo: launch heat_step block=32,BY per_thread=4,PY
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
#define BY 4
#endif
#ifndef PY
#define PY 8
#endif
#ifndef REV
#define REV 1
#endif
#define BX 32

// Loads the 4 cells (c0..c0+3) of the row starting at row_base; cells at or past nx read as 0
// (never used). With vec, row_base and c0 are multiples of 4 (nx % 4 == 0).
float4 load4(__global const float* restrict u, size_t row_base, uint c0, uint nx, int vec)
{
    if (vec) return vload4((row_base + c0) >> 2, u);
    float4 v;
    v.x = c0 + 0u < nx ? u[row_base + c0 + 0u] : 0.0f;
    v.y = c0 + 1u < nx ? u[row_base + c0 + 1u] : 0.0f;
    v.z = c0 + 2u < nx ? u[row_base + c0 + 2u] : 0.0f;
    v.w = c0 + 3u < nx ? u[row_base + c0 + 3u] : 0.0f;
    return v;
}

#if CPU_PATH
// The CPU path: a work-group's tile is 4*BX cells by BY*PY rows (the GPU path's geometry); its
// first BY*PY work-items take one row of it each, as one plain loop over the row's interior that
// the compiler vectorises (PoCL lowers vload16 of unaligned rows to 128-bit pieces, and loops
// over work-items vectorise only when a work-item's code has no loop). No barrier.
__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void heat_step(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, float alpha)
{
    const int t = (int)(get_local_id(1) * BX + get_local_id(0));
    const int y = (int)get_group_id(1) * (BY * PY) + t;
    const int xs = (int)get_group_id(0) * (4 * BX);
    const int w = (int)nx, h = (int)ny;
    if (t >= BY * PY || y >= h || xs >= w) return;
    const int xe = min(xs + 4 * BX, w);
    __global const float* c = u_in + (size_t)y * w;
    __global float* o = u_out + (size_t)y * w;
    if (y == 0 || y + 1 == h) {  // Dirichlet rows copy
        for (int x = xs; x < xe; ++x) o[x] = c[x];
        return;
    }
    __global const float* up = c - w;
    __global const float* dn = c + w;
    for (int x = max(xs, 1); x < min(xe, w - 1); ++x) o[x] = c[x] + alpha * (c[x - 1] + c[x + 1] + up[x] + dn[x] - 4.0f * c[x]);
    if (xs == 0) o[0] = c[0];
    if (xe == w) o[w - 1] = c[w - 1];
}
#else
__kernel __attribute__((reqd_work_group_size(BX, BY, 1)))
void heat_step(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, float alpha)
{
    // First (.x) and last (.w) cell of each of the work-item's PY rows, for its x-neighbours.
    __local float first_cell[PY][BY][BX];
    __local float last_cell[PY][BY][BX];

    const uint lx = (uint)get_local_id(0);
    const uint ly = (uint)get_local_id(1);
    const uint c0 = 4u * ((uint)get_group_id(0) * BX + lx);
    uint by = (uint)get_group_id(1);
#if REV
    if (u_in > u_out) by = (uint)get_num_groups(1) - 1u - by;  // alternate the sweep direction
#endif
    const uint y0 = (by * BY + ly) * PY;
    const int act = c0 < nx && y0 < ny;  // this work-item owns cells
    const int vec = (nx & 3u) == 0u;     // float4 path: rows 16-byte aligned

    // Phase 1: every load up front. Rows y0-1 .. y0+PY (outside [0, ny) read as 0, never used),
    // plus the one extra float per row at the work-group's x edges.
    float4 r[PY + 2];
#pragma unroll
    for (int k = 0; k < PY + 2; ++k) {
        const uint yy = y0 + (uint)k - 1u;  // wraps to a huge value for y0 == 0, k == 0
        r[k] = (float4)(0.0f);
        if (act && yy < ny) r[k] = load4(u_in, (size_t)yy * nx, c0, nx, vec);
    }
    float edge[PY];  // left neighbour (lx == 0) or right neighbour (lx == BX-1) of each row
#pragma unroll
    for (int k = 0; k < PY; ++k) {
        const uint y = y0 + (uint)k;
        const size_t row = (size_t)y * nx;
        edge[k] = 0.0f;
        if (act && y < ny) {
            if (lx == 0u && c0 >= 1u) edge[k] = u_in[row + c0 - 1u];
            else if (lx == BX - 1u && c0 + 4u < nx) edge[k] = u_in[row + c0 + 4u];
        }
    }

    // Exchange the row ends through local memory (what best.cu did with warp shuffles).
#pragma unroll
    for (int k = 0; k < PY; ++k) {
        first_cell[k][ly][lx] = r[k + 1].x;
        last_cell[k][ly][lx] = r[k + 1].w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!act) return;

    // Phase 2: arithmetic and stores.
    const uint last = nx - 1u;
#pragma unroll
    for (int k = 0; k < PY; ++k) {
        const uint y = y0 + (uint)k;
        if (y >= ny) break;
        const float4 a = r[k], b = r[k + 1], c = r[k + 2];
        const size_t row = (size_t)y * nx;
        float4 o = b;  // boundary cells copy u_in
        if (y >= 1u && y + 1u < ny) {
            const float left = lx > 0u ? last_cell[k][ly][lx - 1u] : edge[k];
            const float right = lx < BX - 1u ? first_cell[k][ly][lx + 1u] : edge[k];
            // interior row: update the cells with 0 < x < nx-1
            const float n0 = b.x + alpha * (left + b.y + a.x + c.x - 4.0f * b.x);
            const float n1 = b.y + alpha * (b.x + b.z + a.y + c.y - 4.0f * b.y);
            const float n2 = b.z + alpha * (b.y + b.w + a.z + c.z - 4.0f * b.z);
            const float n3 = b.w + alpha * (b.z + right + a.w + c.w - 4.0f * b.w);
            if (c0 >= 1u && c0 < last) o.x = n0;
            if (c0 + 1u < last) o.y = n1;
            if (c0 + 2u < last) o.z = n2;
            if (c0 + 3u < last) o.w = n3;
        }
        if (vec) {
            vstore4(o, (row + c0) >> 2, u_out);
        } else {
            u_out[row + c0] = o.x;
            if (c0 + 1u < nx) u_out[row + c0 + 1u] = o.y;
            if (c0 + 2u < nx) u_out[row + c0 + 2u] = o.z;
            if (c0 + 3u < nx) u_out[row + c0 + 3u] = o.w;
        }
    }
}
#endif
