// adi3d best-known OpenCL kernels: an OpenCL C 1.2 port of best.cu (LOD-ADI heat step, three
// tridiagonal sweeps x, y, z, one launch each, every launch reading u_in once and writing u_out
// once).
//
// WHAT MAKES IT FAST (best.cu's design; local memory and barriers where CUDA used shuffles)
// - No d' scratch traffic: every line lives in private registers, split into chunks (the 32
//   work-items of a row of the work-group for x-lines, the P rows of the work-group for y/z-lines).
//   Both Thomas recurrences are first-order linear, y_j = a_j y_{j-1} + t_j, so each chunk
//   composes its affine map y -> A y + B, the maps are combined by a scan, and each chunk replays
//   its recurrence from the exact carry-in; the same for the back substitution
//   v_j = d'_j + a_j v_{j+1}. An exact reordering of the Thomas algorithm (no truncation): 4 B read
//   and 4 B written per cell per sweep.
// - Constant coefficients: e_j = 1/den_j (d'_j = e_j (rhs_j + mu d'_{j-1}), c'_j = -mu e_j)
//   depends only on j and mu: tabulated once per work-group in local memory from its closed form
//   e_j = (1 - q^j) / (r1 (1 - q^(j+1))), q = r2/r1, with e_j = 0 past the line so padding is
//   inert (and finite).
// - x sweep: a work-group of 32 x WX work-items takes WX consecutive x-lines per round, i.e. one
//   contiguous stretch of WX*nx floats, copied into local memory by the whole group (float4
//   granules when nx % 4 == 0; ASYNC=1 issues the NEXT round's copy by async_work_group_copy
//   before the current round is solved, best.cu's cp.async pipeline). Row w of the group solves
//   line w: work-item (lane) takes an odd-length chunk, so its strided local reads are
//   bank-conflict-free. The 32-chunk scans of best.cu (warp shuffles) are Hillis-Steele scans over
//   local memory, one barrier per step (ping-pong arrays), written out step by step (SCAN32) so
//   that no loop with a barrier sits inside another. The solved line goes back through local
//   memory and out as coalesced vstore4 (scalar when nx % 4 != 0). Face lines run the same code
//   with a = 0, t = 1 (a copy), so every work-item reaches every barrier.
// - y and z sweeps: a work-group = TX = 16 lines along x (64-byte row segments, whole 32-byte
//   sectors) x P = 16 rows of work-items, row p owning chunk p (K points) of all TX lines; all K
//   loads of a work-item are issued before any arithmetic; the chunk maps meet through a
//   local-memory carry (one barrier for the forward and one for the backward recurrence).
// - Persistent grids (grid=): the kernels stride over lines / tiles, so any grid is correct; the
//   tables are built once per work-group.
// - Lines longer than the chunks allow (x: nx > 32*KX+1 = 609, y/z: len > P*KMAX+1) are solved
//   one work-item per line, the Thomas algorithm on global memory (d' kept in u_out). That branch
//   has no barrier, and the chunked loops then run zero rounds: no early return before a barrier.
// DIFFERENCES FROM best.cu: 256 work-items per group at most, which NVIDIA's OpenCL needs
// (CL_KERNEL_WORK_GROUP_SIZE was 256 for adi_y at best.cu's 32 x 16, reqd_work_group_size
// notwithstanding): the y/z tiles are 16 lines wide instead of 32; the x-line copy is synchronous
// by default (ASYNC=0).
// PoCL 5.0: its work-group generator aborts ("Assertion 'region_entry_barrier != NULL' failed") on
// an if/else between two barriers of a loop that has barriers, when one arm is a loop and the other
// has control flow too. adi_x had two: `if (vec) float4 copy loop else float copy loop` for the
// staging copy and for the write-out, both in the round loop. Each is now one loop with the
// (uniform) granule choice inside it (copy_in / copy_out), and ASYNC=1 issues both async copies, the
// unused one empty, on one event: the same memory traffic.
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture): every sweep is one work-item per
// line, the serial solver above (no local memory, no barrier), with consecutive work-items on
// consecutive lines. It does the seed's work with cheaper arithmetic: the seed spends two
// divisions per point forward and an exp2, a log2 and a division per point backward, this path one
// division forward (the e_j recurrence) and one fma backward (e_j kept from the forward pass).
// PoCL runs a work-group as loops over its work-items split at every barrier, so the GPU path's
// scans cost it dozens of passes per line.
//
// CHECKED: kevo eval adi3d tasks/adi3d/best.cl --backend opencl --sizes all --check-only on PoCL
// 3.1 (2-core CPU) with the defaults, PATH=gpu, PATH=gpu ASYNC=1, PATH=gpu TX=32 P=8 WX=2 GX=528,
// and the serial fallbacks (a copy of this file with KX=1 and KMAX=2, PATH=gpu): ok at every small
// size, held-out included; the measured times are in docs/best-kernels.md. The same checks on
// PoCL 5.0 (Ubuntu 24.04's, scripts/pocl5-chroot.sh): ok.
// kevo: tune PATH auto gpu cpu
// kevo: tune WX 4 2 8
// kevo: tune GX 1056 528
// kevo: tune TX 16 32
// kevo: tune P 16 32 8
// kevo: tune GYZ 264 132
// kevo: tune ASYNC 0 1
// kevo: launch adi_x block=32,WX grid=GX
// kevo: launch adi_y block=TX,P grid=GYZ
// kevo: launch adi_z block=TX,P grid=GYZ
#ifndef PATH
#define PATH auto
#endif
#ifndef WX
#define WX 4  // rows of 32 work-items per group in adi_x (each row solves one x-line per round)
#endif
#ifndef TX
#define TX 16  // lines per tile (consecutive x) in adi_y / adi_z
#endif
#ifndef P
#define P 16  // rows per group in adi_y / adi_z = chunks per y/z-line
#endif
#ifndef ASYNC
#define ASYNC 0  // 1: async_work_group_copy of the next round while this one is solved; 0: a plain cooperative copy
#endif
#ifndef KX
#define KX 19  // max chunk length per work-item in adi_x (odd): x-lines up to 32*KX+1 = 609 points
#endif
#ifndef KMAX
#define KMAX (P >= 32 ? 16 : P == 16 ? 28 : 448 / P + 1)  // max chunk in adi_y/z: lines up to P*KMAX+1 points
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
#define ECAP 64  // CPU path: the first ECAP elimination factors of a line are kept in private memory
#define NXB (32 * KX + 4)  // per-line share of the x staging buffer (multiple of 4 floats)
#define NYB (P * KMAX + 2)

// e_j = 1/den_j of the interior system, j = 1 .. len-2 (0 elsewhere, which makes padding inert).
float efac(uint j, uint len, float inv_r1, float q, float lq)
{
    if (j == 0u || j + 1u >= len) return 0.0f;
    const float t = exp2((float)j * lq);  // q^j
    return inv_r1 * (1.0f - t) / (1.0f - t * q);
}
// The chunked recurrences run over j = 1 .. len-1 (and padding past it):
//   forward   y_j = a_j y_{j-1} + te_j u_j,  y_0 = u_0          (y_j = d'_j for interior j)
//   backward  v_j = a_j v_{j+1} + y_j                            (v_j = solution)
// with a_j = mu e_j, te_j = e_j inside, and a = 0, te = 1 at the end point j = len-1 (so
// y = v = u_{len-1} there, and the Dirichlet values enter as mu*u_0 and mu*u_{len-1}, exactly as
// the augmented right-hand sides of the Thomas algorithm), a = te = 0 on the padding past it.
// Table F holds e_j (0 at and past the end), table E holds te_j.
float tfac(uint j, uint len, float inv_r1, float q, float lq)
{
    return j + 1u == len ? 1.0f : efac(j, len, inv_r1, q, lq);
}

// Roots r1 > r2 of t^2 - (1+2mu) t + mu^2; q = r2/r1 = 4 mu^2 / (b+s)^2 without cancellation.
float3 coefficients(float mu)
{
    const float b = 1.0f + 2.0f * mu;
    const float bs = b + sqrt(1.0f + 4.0f * mu);
    const float q = 4.0f * mu * mu / (bs * bs);
    return (float3)(2.0f / bs, q, log2(q));  // inv_r1, q, log2 q
}

// One work-item per line, the Thomas algorithm straight on global memory (d' kept in u_out): the
// CPU path, and the GPU path's fallback for lines longer than its chunks allow. The factors
// e_j = 1/den_j follow their recurrence e_j = 1/(b - mu^2 e_{j-1}) (one division per point); the
// first ECAP stay in private memory for the back substitution, later ones come from the closed form.
void solve_line_serial(__global const float* restrict u_in, __global float* restrict u_out, size_t base, size_t stride,
                       uint len, bool face, float mu, float3 cf)
{
    if (face) {
        for (uint j = 0; j < len; ++j) u_out[base + j * stride] = u_in[base + j * stride];
        return;
    }
    const float b = 1.0f + 2.0f * mu, mu2 = mu * mu;
    const float left = u_in[base];
    const float right = u_in[base + (size_t)(len - 1) * stride];
    u_out[base] = left;
    u_out[base + (size_t)(len - 1) * stride] = right;
    float ecache[ECAP];
    float e = 0.0f, d = 0.0f;
    for (uint j = 1; j + 1 < len; ++j) {
        float rhs = u_in[base + j * stride];
        if (j == 1) rhs += mu * left;
        if (j + 2 == len) rhs += mu * right;
        e = 1.0f / (b - mu2 * e);
        d = (rhs + mu * d) * e;
        if (j < ECAP) ecache[j] = e;
        u_out[base + j * stride] = d;
    }
    float x = d;
    for (uint j = len - 2; j-- > 1;) {
        const float ej = j < ECAP ? ecache[j] : efac(j, len, cf.x, cf.y, cf.z);
        x = u_out[base + j * stride] + mu * ej * x;
        u_out[base + j * stride] = x;
    }
}

// The CPU path of all three sweeps: work-item k of the launch solves lines k, k + (work-items), ...;
// consecutive work-items take consecutive lines (neighbouring x for y/z lines), no local memory
// and no barrier. Line l has n1 lines per row: base(l) = (l / n1) * row_stride + (l % n1) * pitch.
void sweep_serial(__global const float* restrict u_in, __global float* restrict u_out, uint n1, uint n2, size_t pitch,
                  size_t row_stride, size_t stride, uint len, float mu)
{
    const float3 cf = coefficients(mu);
    const uint k0 = (uint)(get_global_id(1) * get_global_size(0) + get_global_id(0));
    const uint nk = (uint)(get_global_size(0) * get_global_size(1));
    for (uint l = k0; l < n1 * n2; l += nk) {
        const uint a = l % n1, c = l / n1;
        const bool face = a == 0u || c == 0u || a == n1 - 1u || c == n2 - 1u;
        solve_line_serial(u_in, u_out, (size_t)c * row_stride + (size_t)a * pitch, stride, len, face, mu, cf);
    }
}

// ---------------------------------------------------------------------------------------------
// x sweep

// Copies nf floats between global and local memory by the work-group's 32*WX work-items, as
// float4 granules when vec (nf % 4 == 0). One loop with the granule choice inside it: PoCL 5.0
// aborts on `if (vec) loop else loop` between two barriers of the round loop.
void copy_in(__local float* dst, __global const float* restrict src, uint nf, bool vec, uint lid)
{
    for (uint q = lid; q < (vec ? nf >> 2 : nf); q += 32u * WX) {
        if (vec)
            vstore4(vload4(q, src), q, dst);
        else
            dst[q] = src[q];
    }
}
void copy_out(__global float* restrict dst, __local const float* src, uint nf, bool vec, uint lid)
{
    for (uint q = lid; q < (vec ? nf >> 2 : nf); q += 32u * WX) {
        if (vec)
            vstore4(vload4(q, src), q, dst);
        else
            dst[q] = src[q];
    }
}

// ASYNC=1: issues the copy of `cnt` consecutive x-lines starting at line l0 into dst (contiguous,
// nx apart), waited on later (ASYNC=0 copies them at once with copy_in).
#if ASYNC
event_t stage_lines(__local float* dst, __global const float* u_in, uint l0, uint cnt, uint nx, bool vec)
{
    const size_t off = (size_t)l0 * nx;
    const size_t nf = (size_t)cnt * nx;
    // Both copies, the unused one empty, on one event: no if/else of two copy loops (see copy_in).
    const event_t ev = async_work_group_copy((__local float4*)dst, (__global const float4*)(u_in + off), vec ? nf >> 2 : 0, 0);
    return async_work_group_copy(dst, u_in + off, vec ? 0 : nf, ev);
}
#endif

// One step (distance d) of the inclusive scan of affine maps (A, B) over the 32 work-items of row
// w: forward (lower lanes first) or backward; reads buffer `cur`, writes buffer cur ^ 1. The
// caller places the barriers, so every barrier of adi_x sits in straight-line code.
#define SCAN_STEP(d, cur, fwd)                                                     \
    do {                                                                           \
        const uint src_ = (cur) * (32u * WX) + w * 32u;                            \
        if ((fwd) ? lane >= (d) : lane + (d) < 32u) {                              \
            const uint sl_ = (fwd) ? lane - (d) : lane + (d);                      \
            const float Ap_ = SA[src_ + sl_], Bp_ = SB[src_ + sl_];                \
            B = fma(A, Bp_, B);                                                    \
            A *= Ap_;                                                              \
        }                                                                          \
        SA[((cur) ^ 1u) * (32u * WX) + w * 32u + lane] = A;                        \
        SB[((cur) ^ 1u) * (32u * WX) + w * 32u + lane] = B;                        \
    } while (0)
// The whole 32-lane scan: values enter in buffer 0, the result is in buffer 1 after the last barrier.
// A plain block, not do-while(0): no loop construct around its barriers at all.
#define SCAN32(fwd)                                                                \
    {                                                                              \
        SA[w * 32u + lane] = A;                                                    \
        SB[w * 32u + lane] = B;                                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        SCAN_STEP(1u, 0u, fwd);                                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        SCAN_STEP(2u, 1u, fwd);                                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        SCAN_STEP(4u, 0u, fwd);                                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        SCAN_STEP(8u, 1u, fwd);                                                    \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
        SCAN_STEP(16u, 0u, fwd);                                                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                              \
    }

__kernel __attribute__((reqd_work_group_size(32, WX, 1))) void adi_x(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, uint nz, float mu)
{
#if CPU_PATH
    sweep_serial(u_in, u_out, ny, nz, nx, (size_t)nx * ny, 1, nx, mu);  // x-lines at (y, z): base (z*ny + y)*nx
#else
    __local float4 bufv[2 * WX * NXB / 4];  // two rounds of WX lines (contiguous, nx apart) + padding
    __local float tabE[NXB], tabF[NXB];
    __local float SA[2 * 32 * WX], SB[2 * 32 * WX];  // scan ping-pong arrays
    __local float* buf = (__local float*)bufv;
    const uint lane = (uint)get_local_id(0), w = (uint)get_local_id(1);
    const uint lid = w * 32u + lane, nthr = 32u * WX;
    const float3 cf = coefficients(mu);
    for (uint j = lid; j < NXB; j += nthr) {
        tabE[j] = tfac(j, nx, cf.x, cf.y, cf.z);
        tabF[j] = efac(j, nx, cf.x, cf.y, cf.z);
    }
    for (uint j = lid; j < 2u * WX * NXB; j += nthr) buf[j] = 0.0f;  // padding stays finite
    barrier(CLK_LOCAL_MEM_FENCE);

    const uint nlines = ny * nz;
    const uint ngroups = (uint)(get_num_groups(0) * get_num_groups(1));
    const uint gid = (uint)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    const uint K = (((nx - 1u) + 31u) / 32u) | 1u;  // odd chunk length: conflict-free strided reads
    // Very long lines (uniform over the launch) are solved one work-item per line, without
    // barriers; the chunked loop below then has no rounds (no early return before its barriers).
    const bool serial = K > KX;
    if (serial) {
        for (uint l = gid * nthr + lid; l < nlines; l += ngroups * nthr) {
            const uint y = l % ny, z = l / ny;
            const bool face = y == 0u || z == 0u || y == ny - 1u || z == nz - 1u;
            solve_line_serial(u_in, u_out, (size_t)l * nx, 1, nx, face, mu, cf);
        }
    }
    const uint nchunked = serial ? 0u : nlines;

    const bool vec = (nx & 3u) == 0u;  // 16-byte aligned rows
    const uint j0 = 1u + lane * K;     // this work-item's chunk: j0 .. j0+K-1 (covers 1 .. nx-1 + padding)
    const uint step = ngroups * WX;
    uint l0 = gid * WX;  // first line of this round (group-uniform)
#if ASYNC
    event_t ev;
    if (l0 < nchunked) ev = stage_lines(buf, u_in, l0, min((uint)WX, nchunked - l0), nx, vec);
#endif
    for (uint it = 0; l0 < nchunked; ++it, l0 += step) {
        __local float* s = buf + (it & 1u) * (WX * NXB);
        const uint cnt = min((uint)WX, nchunked - l0);
#if ASYNC
        const uint ln0 = l0 + step;
        event_t evn;
        if (ln0 < nchunked)  // the other buffer: its last reads ended at the previous round's barrier
            evn = stage_lines(buf + ((it + 1u) & 1u) * (WX * NXB), u_in, ln0, min((uint)WX, nchunked - ln0), nx, vec);
        wait_group_events(1, &ev);
        ev = evn;
#else
        copy_in(s, u_in + (size_t)l0 * nx, cnt * nx, vec, lid);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);

        const uint l = l0 + w;
        const uint y = l % ny, z = l / ny;
        const bool face = w >= cnt || y == 0u || z == 0u || y == ny - 1u || z == nz - 1u;
        const float me = face ? 0.0f : mu;  // face lines: a = 0, te = 1 -> copied
        __local float* sl = s + w * nx;
        float r[KX];
        // forward, pass 1: this chunk's affine map y_out = A y_in + B; r <- te_j u_j
        float A = 1.0f, B = 0.0f;
#pragma unroll
        for (uint k = 0; k < KX; ++k)
            if (k < K) {
                const float a = me * tabF[j0 + k];
                const float t = (face ? 1.0f : tabE[j0 + k]) * sl[j0 + k];
                r[k] = t;
                B = fma(a, B, t);
                A *= a;
            }
        const float u0 = sl[0];
        SCAN32(true);
        // y just before this chunk: the inclusive scan of the lane before, applied to y_0 = u_0
        const uint fin = 32u * WX + w * 32u;  // results in buffer 1
        float yv = lane == 0u ? u0 : fma(SA[fin + lane - 1u], u0, SB[fin + lane - 1u]);
        // pass 2: y_j (= d'_j inside)
#pragma unroll
        for (uint k = 0; k < KX; ++k)
            if (k < K) {
                yv = fma(me * tabF[j0 + k], yv, r[k]);
                r[k] = yv;
            }
        // backward v_j = a_j v_{j+1} + y_j: pass 1 (maps, the chunk from its end)
        A = 1.0f;
        B = 0.0f;
#pragma unroll
        for (int k = KX - 1; k >= 0; --k)
            if ((uint)k < K) {
                const float a = me * tabF[j0 + k];
                B = fma(a, B, r[k]);
                A *= a;
            }
        // (buffer 0 is free: its last reads were in the forward scan's last step)
        SCAN32(false);
        // v just after this chunk (0 past the last lane: a = 0 there anyway)
        float v = lane == 31u ? 0.0f : SB[fin + lane + 1u];
#pragma unroll
        for (int k = KX - 1; k >= 0; --k)
            if ((uint)k < K) {
                v = fma(me * tabF[j0 + k], v, r[k]);
                r[k] = v;
            }
        if (!face) {
#pragma unroll
            for (uint k = 0; k < KX; ++k)
                if (k < K && j0 + k + 2u <= nx) sl[j0 + k] = r[k];  // interior points only
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // The round's lines leave as one coalesced stretch.
        copy_out(u_out + (size_t)l0 * nx, s, cnt * nx, vec, lid);
        barrier(CLK_LOCAL_MEM_FENCE);  // s is refilled by the copy of a later round
    }
#endif
}

// ---------------------------------------------------------------------------------------------
// y and z sweeps: lines (x, r2) with points base + j*stride, base = r2*row_stride + x. A tile is TX
// lines of consecutive x at one r2; row p of the work-group owns chunk p (K points) of all TX lines.
// sm: 2*NYB + 4*TX*P floats of local memory (the two tables and the four carry arrays).
void sweep_strided(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint n2, size_t row_stride,
                   size_t stride, uint len, float mu, __local float* sm)
{
    __local float* tabE = sm;
    __local float* tabF = sm + NYB;
    __local float* SA = sm + 2 * NYB;  // [P][TX] each
    __local float* SB = SA + TX * P;
    __local float* SA2 = SB + TX * P;
    __local float* SB2 = SA2 + TX * P;
    const uint tx = (uint)get_local_id(0), p = (uint)get_local_id(1);
    const float3 cf = coefficients(mu);
    for (uint j = p * TX + tx; j < NYB; j += TX * P) {
        tabE[j] = tfac(j, len, cf.x, cf.y, cf.z);
        tabF[j] = efac(j, len, cf.x, cf.y, cf.z);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const uint K = (len - 1u + P - 1u) / P;  // chunks cover j = 1 .. len-1
    const uint nb = (uint)(get_num_groups(0) * get_num_groups(1));
    const uint bid = (uint)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    // Very long lines (uniform over the launch) are solved one work-item per line, without
    // barriers; the tile loop below then has no tiles (no early return before its barriers).
    const bool serial = K > KMAX;
    if (serial) {
        const uint nthreads = nb * TX * P;
        for (uint l = bid * TX * P + p * TX + tx; l < nx * n2; l += nthreads) {
            const uint x = l % nx, r2 = l / nx;
            const bool face = x == 0u || r2 == 0u || x == nx - 1u || r2 == n2 - 1u;
            solve_line_serial(u_in, u_out, (size_t)r2 * row_stride + x, stride, len, face, mu, cf);
        }
    }
    const uint ntx = (nx + TX - 1u) / TX, ntiles = serial ? 0u : ntx * n2;
    const uint j0 = 1u + p * K;  // this row's chunk: j0 .. j0+K-1
    for (uint T = bid; T < ntiles; T += nb) {  // group-uniform
        const uint r2 = T / ntx, x = (T - r2 * ntx) * TX + tx;
        const bool valid = x < nx;
        const bool face = !valid || x == 0u || x == nx - 1u || r2 == 0u || r2 == n2 - 1u;
        const float me = face ? 0.0f : mu;  // face lines: a = 0, te = 1 -> copied
        const size_t base = (size_t)r2 * row_stride + x;
        // points j0 .. j0+nv-1 of the chunk lie on the line (j <= len-1); the rest is padding (0)
        const int nv = valid ? min((int)K, (int)len - (int)j0) : 0;
        float r[KMAX];
        {
            size_t pi = base + (size_t)j0 * stride;
#pragma unroll
            for (int k = 0; k < KMAX; ++k) {
                if (k < (int)K) r[k] = k < nv ? u_in[pi] : 0.0f;
                pi += stride;
            }
        }
        const float u0 = valid ? u_in[base] : 0.0f;  // y_0 (every row needs it: a cache hit)
        if (p == 0u && valid) u_out[base] = u0;
        // forward pass 1
        float A = 1.0f, B = 0.0f;
#pragma unroll
        for (int k = 0; k < KMAX; ++k)
            if (k < (int)K) {
                const float a = me * tabF[j0 + k];
                const float t = (face ? 1.0f : tabE[j0 + k]) * r[k];
                r[k] = t;
                B = fma(a, B, t);
                A *= a;
            }
        SA[p * TX + tx] = A;
        SB[p * TX + tx] = B;
        barrier(CLK_LOCAL_MEM_FENCE);
        float yv = u0;
        for (uint q = 0; q < p; ++q) yv = fma(SA[q * TX + tx], yv, SB[q * TX + tx]);
#pragma unroll
        for (int k = 0; k < KMAX; ++k)
            if (k < (int)K) {
                yv = fma(me * tabF[j0 + k], yv, r[k]);
                r[k] = yv;
            }
        // back substitution
        A = 1.0f;
        B = 0.0f;
#pragma unroll
        for (int k = KMAX - 1; k >= 0; --k)
            if (k < (int)K) {
                const float a = me * tabF[j0 + k];
                B = fma(a, B, r[k]);
                A *= a;
            }
        SA2[p * TX + tx] = A;
        SB2[p * TX + tx] = B;
        barrier(CLK_LOCAL_MEM_FENCE);
        float v = 0.0f;
        for (uint q = P - 1u; q > p; --q) v = fma(SA2[q * TX + tx], v, SB2[q * TX + tx]);
#pragma unroll
        for (int k = KMAX - 1; k >= 0; --k)
            if (k < (int)K) {
                v = fma(me * tabF[j0 + k], v, r[k]);
                r[k] = v;
            }
        {
            size_t po = base + (size_t)j0 * stride;
#pragma unroll
            for (int k = 0; k < KMAX; ++k) {
                if (k < nv) u_out[po] = r[k];  // includes the end point j = len-1 (v = u there)
                po += stride;
            }
        }
    }
}

__kernel __attribute__((reqd_work_group_size(TX, P, 1))) void adi_y(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, uint nz, float mu)
{
    // lines along y at (x, z): base z*nx*ny + x, stride nx
#if CPU_PATH
    sweep_serial(u_in, u_out, nx, nz, 1, (size_t)nx * ny, nx, ny, mu);
#else
    __local float sm[2 * NYB + 4 * TX * P];
    sweep_strided(u_in, u_out, nx, nz, (size_t)nx * ny, nx, ny, mu, sm);
#endif
}

__kernel __attribute__((reqd_work_group_size(TX, P, 1))) void adi_z(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, uint nz, float mu)
{
    // lines along z at (x, y): base y*nx + x, stride nx*ny
#if CPU_PATH
    sweep_serial(u_in, u_out, nx, ny, 1, nx, (size_t)nx * ny, nz, mu);
#else
    __local float sm[2 * NYB + 4 * TX * P];
    sweep_strided(u_in, u_out, nx, ny, nx, (size_t)nx * ny, nz, mu, sm);
#endif
}
