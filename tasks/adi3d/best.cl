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
//   contiguous stretch of WX*nx floats, staged into local memory by async_work_group_copy (float4
//   granules when nx % 4 == 0) with the NEXT round's copy issued before the current round is
//   solved (double buffering, best.cu's cp.async pipeline; ASYNC=0 copies synchronously). Row w
//   of the group solves line w: work-item (lane) takes an odd-length chunk, so its strided local
//   reads are bank-conflict-free. The 32-chunk scans of best.cu (warp shuffles) are Hillis-Steele
//   scans over local memory, one barrier per step (ping-pong arrays). The solved line goes back
//   through local memory and out as coalesced vstore4 (scalar when nx % 4 != 0). Face lines run the
//   same code with a = 0, t = 1 (a copy), so every work-item reaches every barrier.
// - y and z sweeps: a work-group = 32 lines along x (coalesced 128-byte rows) x P rows of
//   work-items, row p owning chunk p (K points) of all 32 lines; all K loads of a work-item are
//   issued before any arithmetic; the chunk maps meet through a local-memory carry (one barrier
//   for the forward and one for the backward recurrence).
// - Persistent grids (grid=): the kernels stride over lines / tiles, so any grid is correct; the
//   tables are built once per work-group.
// - Lines longer than the chunks allow (x: nx > 32*KX+1 = 609, y/z: len > P*KMAX+1) fall back to
//   one work-item per line, the Thomas algorithm on global memory (d' kept in u_out).
//
// CHECKED with the snapshot binary on PoCL (CPU, 2 cores), verdict ok at every size, held-out
// included:  kevo eval adi3d tasks/adi3d/best.cl --backend opencl --sizes all --check-only
//   --profile small  32^3x5, 48x40x24x4, 60x52x44x3, held-out 40x28x36x5
//   --profile paper  64^3x20, 96^3x15, 128^3x10, held-out 256x192x128x10
//   --profile large  384^3x5, 512x320x256x5, 448^3x4, held-out 576x416x224x5
// and at the small profile with -D: ASYNC=0; WX=2 GX=528 P=32 GYZ=132; WX=8 ASYNC=0 P=32;
// WX=8 GYZ=132; WX=2 GX=528; WX=2 ASYNC=0 P=32 GX=528: all ok; the serial fallbacks with a copy
// of this file where KX=1 and KMAX=2 (some sizes take the chunked path, others the serial one): ok.
// Timed only on PoCL (CPU), paper profile, median per size: seed 147 ms / 400 ms / 600 ms /
// 1.90 s, this file 2.06 s / 3.56 s / 4.35 s / 10.4 s: 5-14x SLOWER on a CPU, where every barrier
// makes PoCL loop over the work-items with their private chunk arrays saved around it (a guess,
// not profiled). NOT TIMED ON A GPU: the CPU figures say nothing about GPU performance.
// kevo: tune WX 4 2 8
// kevo: tune GX 1056 528
// kevo: tune P 16 32
// kevo: tune GYZ 264 132
// kevo: tune ASYNC 1 0
// kevo: launch adi_x block=32,WX grid=GX
// kevo: launch adi_y block=32,P grid=GYZ
// kevo: launch adi_z block=32,P grid=GYZ
#ifndef WX
#define WX 4  // rows of 32 work-items per group in adi_x (each row solves one x-line per round)
#endif
#ifndef P
#define P 16  // rows per group in adi_y / adi_z = chunks per y/z-line
#endif
#ifndef ASYNC
#define ASYNC 1  // 1: async_work_group_copy of the next round while this one is solved; 0: synchronous
#endif
#ifndef KX
#define KX 19  // max chunk length per work-item in adi_x (odd): x-lines up to 32*KX+1 = 609 points
#endif
#ifndef KMAX
#define KMAX (P >= 32 ? 16 : P == 16 ? 28 : 448 / P + 1)  // max chunk in adi_y/z: lines up to P*KMAX+1 points
#endif
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

// Fallback for lines longer than the chunks allow: one work-item per line, the Thomas algorithm
// straight on global memory (d' kept in u_out), c'_j = -mu e_j from its closed form.
void solve_line_serial(__global const float* u_in, __global float* u_out, size_t base, size_t stride, uint len, bool face,
                       float mu, float3 cf)
{
    if (face) {
        for (uint j = 0; j < len; ++j) u_out[base + j * stride] = u_in[base + j * stride];
        return;
    }
    const float b = 1.0f + 2.0f * mu;
    const float left = u_in[base];
    const float right = u_in[base + (size_t)(len - 1) * stride];
    u_out[base] = left;
    u_out[base + (size_t)(len - 1) * stride] = right;
    float c = 0.0f, d = 0.0f;
    for (uint j = 1; j + 1 < len; ++j) {
        float rhs = u_in[base + j * stride];
        if (j == 1) rhs += mu * left;
        if (j + 2 == len) rhs += mu * right;
        const float den = b + mu * c;
        c = -mu / den;
        d = (rhs + mu * d) / den;
        u_out[base + j * stride] = d;
    }
    float x = d;
    for (uint j = len - 2; j-- > 1;) {
        x = u_out[base + j * stride] + mu * efac(j, len, cf.x, cf.y, cf.z) * x;
        u_out[base + j * stride] = x;
    }
}

// ---------------------------------------------------------------------------------------------
// x sweep

// Issues the copy of `cnt` consecutive x-lines starting at line l0 into dst (contiguous, nx apart).
event_t stage_lines(__local float* dst, __global const float* u_in, uint l0, uint cnt, uint nx, bool vec)
{
    const size_t off = (size_t)l0 * nx;
    const size_t nf = (size_t)cnt * nx;
    if (vec) return async_work_group_copy((__local float4*)dst, (__global const float4*)(u_in + off), nf >> 2, 0);
    return async_work_group_copy(dst, u_in + off, nf, 0);
}

// Inclusive scan of affine maps (A, B) over the 32 work-items of row w: forward (lower lanes
// first) or backward (higher lanes first). Values enter in SA/SB[0][...]; returns after a barrier
// with the result in SA/SB[1][...] (5 steps: 0 -> 1 -> 0 -> 1 -> 0 -> 1).
void scan32(float* pA, float* pB, __local float* SA, __local float* SB, uint lane, uint w, bool fwd)
{
    float A = *pA, B = *pB;
    const uint o = w * 32u;
    SA[o + lane] = A;
    SB[o + lane] = B;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint cur = 0u;
    for (uint d = 1u; d < 32u; d <<= 1) {
        const uint src = cur * (32u * WX) + o;
        if (fwd ? lane >= d : lane + d < 32u) {
            const uint sl = fwd ? lane - d : lane + d;
            const float Ap = SA[src + sl], Bp = SB[src + sl];
            B = fma(A, Bp, B);
            A *= Ap;
        }
        cur ^= 1u;
        SA[cur * (32u * WX) + o + lane] = A;
        SB[cur * (32u * WX) + o + lane] = B;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *pA = A;
    *pB = B;
}

__kernel __attribute__((reqd_work_group_size(32, WX, 1))) void adi_x(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, uint nz, float mu)
{
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

    if (K > KX) {  // very long lines (uniform over the launch): one work-item per line, serial
        for (uint l = gid * nthr + lid; l < nlines; l += ngroups * nthr) {
            const uint y = l % ny, z = l / ny;
            const bool face = y == 0u || z == 0u || y == ny - 1u || z == nz - 1u;
            solve_line_serial(u_in, u_out, (size_t)l * nx, 1, nx, face, mu, cf);
        }
        return;
    }

    const bool vec = (nx & 3u) == 0u;  // 16-byte aligned rows
    const uint j0 = 1u + lane * K;     // this work-item's chunk: j0 .. j0+K-1 (covers 1 .. nx-1 + padding)
    const uint step = ngroups * WX;
    uint l0 = gid * WX;  // first line of this round (group-uniform)
    event_t ev;
#if ASYNC
    if (l0 < nlines) ev = stage_lines(buf, u_in, l0, min((uint)WX, nlines - l0), nx, vec);
#endif
    for (uint it = 0; l0 < nlines; ++it, l0 += step) {
        __local float* s = buf + (it & 1u) * (WX * NXB);
        const uint cnt = min((uint)WX, nlines - l0);
#if ASYNC
        const uint ln0 = l0 + step;
        event_t evn;
        if (ln0 < nlines)  // the other buffer: its last reads ended at the previous round's barrier
            evn = stage_lines(buf + ((it + 1u) & 1u) * (WX * NXB), u_in, ln0, min((uint)WX, nlines - ln0), nx, vec);
        wait_group_events(1, &ev);
        ev = evn;
#else
        ev = stage_lines(s, u_in, l0, cnt, nx, vec);
        wait_group_events(1, &ev);
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
        scan32(&A, &B, SA, SB, lane, w, true);
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
        scan32(&A, &B, SA, SB, lane, w, false);
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
        __global float* o = u_out + (size_t)l0 * nx;
        const uint nf = cnt * nx;
        if (vec) {
            for (uint q = lid; q < (nf >> 2); q += nthr) vstore4(vload4(q, s), q, o);
        } else {
            for (uint x = lid; x < nf; x += nthr) o[x] = s[x];
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // s is refilled by the copy issued next round
    }
}

// ---------------------------------------------------------------------------------------------
// y and z sweeps: lines (x, r2) with points base + j*stride, base = r2*row_stride + x. A tile is 32
// lines of consecutive x at one r2; row p of the work-group owns chunk p (K points) of all 32 lines.
// sm: 2*NYB + 4*32*P floats of local memory (the two tables and the four carry arrays).
void sweep_strided(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint n2, size_t row_stride,
                   size_t stride, uint len, float mu, __local float* sm)
{
    __local float* tabE = sm;
    __local float* tabF = sm + NYB;
    __local float* SA = sm + 2 * NYB;  // [P][32] each
    __local float* SB = SA + 32 * P;
    __local float* SA2 = SB + 32 * P;
    __local float* SB2 = SA2 + 32 * P;
    const uint tx = (uint)get_local_id(0), p = (uint)get_local_id(1);
    const float3 cf = coefficients(mu);
    for (uint j = p * 32u + tx; j < NYB; j += 32u * P) {
        tabE[j] = tfac(j, len, cf.x, cf.y, cf.z);
        tabF[j] = efac(j, len, cf.x, cf.y, cf.z);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const uint K = (len - 1u + P - 1u) / P;  // chunks cover j = 1 .. len-1
    const uint nb = (uint)(get_num_groups(0) * get_num_groups(1));
    const uint bid = (uint)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
    if (K > KMAX) {  // very long lines (uniform over the launch): one work-item per line, serial
        const uint nthreads = nb * 32u * P;
        for (uint l = bid * 32u * P + p * 32u + tx; l < nx * n2; l += nthreads) {
            const uint x = l % nx, r2 = l / nx;
            const bool face = x == 0u || r2 == 0u || x == nx - 1u || r2 == n2 - 1u;
            solve_line_serial(u_in, u_out, (size_t)r2 * row_stride + x, stride, len, face, mu, cf);
        }
        return;
    }
    const uint ntx = (nx + 31u) / 32u, ntiles = ntx * n2;
    const uint j0 = 1u + p * K;  // this row's chunk: j0 .. j0+K-1
    for (uint T = bid; T < ntiles; T += nb) {  // group-uniform
        const uint r2 = T / ntx, x = (T - r2 * ntx) * 32u + tx;
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
        SA[p * 32u + tx] = A;
        SB[p * 32u + tx] = B;
        barrier(CLK_LOCAL_MEM_FENCE);
        float yv = u0;
        for (uint q = 0; q < p; ++q) yv = fma(SA[q * 32u + tx], yv, SB[q * 32u + tx]);
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
        SA2[p * 32u + tx] = A;
        SB2[p * 32u + tx] = B;
        barrier(CLK_LOCAL_MEM_FENCE);
        float v = 0.0f;
        for (uint q = P - 1u; q > p; --q) v = fma(SA2[q * 32u + tx], v, SB2[q * 32u + tx]);
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

__kernel __attribute__((reqd_work_group_size(32, P, 1))) void adi_y(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, uint nz, float mu)
{
    __local float sm[2 * NYB + 4 * 32 * P];
    // lines along y at (x, z): base z*nx*ny + x, stride nx
    sweep_strided(u_in, u_out, nx, nz, (size_t)nx * ny, nx, ny, mu, sm);
}

__kernel __attribute__((reqd_work_group_size(32, P, 1))) void adi_z(__global const float* restrict u_in, __global float* restrict u_out, uint nx, uint ny, uint nz, float mu)
{
    __local float sm[2 * NYB + 4 * 32 * P];
    // lines along z at (x, y): base y*nx + x, stride nx*ny
    sweep_strided(u_in, u_out, nx, ny, nx, (size_t)nx * ny, nz, mu, sm);
}
