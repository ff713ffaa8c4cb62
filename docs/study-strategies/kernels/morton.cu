// Study copy of tasks/morton/best.cu for the strategy comparison (docs/study-strategies/README.md):
// the same kernel, its knob space cut or widened to BX x REV x MV x MB = points so every task's space has 48.
// morton best-known kernel for the H200 (sm_90): one explicit 7-point heat step per launch on a
// cube of side N = 2^log_n stored in Morton (Z) order.
//
// WHAT MADE IT FAST
// - A thread owns one 2x2x2 brick = 8 consecutive Morton indices (m0 = 8t): two aligned float4
//   loads and two float4 stores, fully coalesced (a warp streams 1 KB contiguous). 12 of the 24
//   neighbour reads of the brick are its own registers.
// - A warp holds 256 consecutive indices = an 8x8x4 block of cells (lane bits = x1 y1 z1 x2 y2).
//   The other 12 neighbour values per brick (the 2x2 faces) come from the neighbouring brick's
//   registers by __shfl_sync when that brick is in the same warp (lane index arithmetic on the
//   dilated lane bits); only lanes on the warp block's faces load the neighbouring brick from
//   global memory (L1/L2 hits: Morton order keeps neighbours close in memory and time).
// - No decode/encode loops: neighbour bricks and face tests use dilated-integer arithmetic on
//   the masked x/y/z bit lanes (((m & MX) | ~MX) + unit) & MX, etc.
// - Every cell is read from DRAM once per step (8 B/cell model): halo reads are cache hits.
// - The chunk order alternates between launches (by the ping-pong order of the two buffer
//   addresses): each step starts on the cells the previous one wrote last, still in the 60 MB
//   L2; this matters at 256^3 (64 MB per buffer). Knob REV=0 turns it off.
// - log_n < 3 (N <= 4, not in any profile) takes a simple per-cell path.
// Measured on the H200 (large profile, fraction of the measured 4333 GB/s static ceiling):
// 0.69-0.73 at 256^3-512^3 (held-out 256^3x60: 0.694); 0.556 at 128^3x400, which is L2-resident
// and launch-bound. Below the ~0.85-0.9 estimate (not profiled; MV=1/2 below argue against a
// latency limit, the suspect is L2->SM traffic: face bricks fetch ~3x the cell bytes through L2).
//
// ALTERNATIVE PATH (A/B knob; the default MV=0 is the path described above). Neither alternative
// was faster at the held-out 256^3x60: MV=1 0.654, MV=2 (BX=512) 0.557, default MV=0 0.692.
// - MV=1: the loads of the neighbouring bricks on the warp block's faces (L1/L2 hits) are issued
//   right after the brick's own two float4 loads, BEFORE the shuffles, so a thread has up to
//   4 bricks (128 B) in flight at once instead of waiting for its own brick, shuffling, and only
//   then starting a second dependent round trip. Same data, same arithmetic; more registers.
// - MV=2 (needs BX=512): shared-memory tile. A block owns a 16x16x16 cube (4096 consecutive
//   Morton indices, thread t = brick t) plus the 6 face layers of bricks of the neighbour cubes
//   (384 bricks, loaded by threads 0..383 together with their own brick, before one barrier).
//   Neighbour values then come from shared memory ([cell-in-brick][brick] layout). L2->SM
//   traffic per cell drops from ~3x (face bricks of every 8x8x4 warp block) to 1.75x, and every
//   thread has 32-64 B in flight. log_n < 4 falls back to the default path.
// kevo: tune BX 256 128 512 64
// kevo: tune REV 1 0
// kevo: tune MV 0 1 2
// kevo: tune MB 0 4
// kevo: launch morton_stencil block=BX per_thread=8
#ifndef BX
#define BX 256
#endif
#ifndef REV
#define REV 1
#endif
#ifndef MV
#define MV 0
#endif
#ifndef MB
#define MB 0  // launch-bounds min blocks per SM; 0 = none (MV=1 takes 80 registers; MB=4 caps it at 64)
#endif
#if MB > 0
#define MORTON_BOUNDS __launch_bounds__(BX, MB)
#else
#define MORTON_BOUNDS __launch_bounds__(BX)
#endif

#define FULLMASK 0xffffffffu

// Per-cell fallback for tiny cubes (N <= 4): decode, test the faces, re-encode the neighbours.
__device__ unsigned enc_small(unsigned x, unsigned y, unsigned z, unsigned log_n)
{
    unsigned m = 0;
    for (unsigned b = 0; b < log_n; ++b)
        m |= ((x >> b) & 1u) << (3 * b) | ((y >> b) & 1u) << (3 * b + 1) | ((z >> b) & 1u) << (3 * b + 2);
    return m;
}

__device__ void cell_small(const float* __restrict__ u_in, float* __restrict__ u_out, unsigned m, unsigned n, unsigned log_n, float alpha)
{
    unsigned x = 0, y = 0, z = 0;
    for (unsigned b = 0; b < log_n; ++b) {
        x |= ((m >> (3 * b)) & 1u) << b;
        y |= ((m >> (3 * b + 1)) & 1u) << b;
        z |= ((m >> (3 * b + 2)) & 1u) << b;
    }
    const float c = u_in[m];
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
        u_out[m] = c;
        return;
    }
    const float s = u_in[enc_small(x - 1, y, z, log_n)] + u_in[enc_small(x + 1, y, z, log_n)] +
                    u_in[enc_small(x, y - 1, z, log_n)] + u_in[enc_small(x, y + 1, z, log_n)] +
                    u_in[enc_small(x, y, z - 1, log_n)] + u_in[enc_small(x, y, z + 1, log_n)];
    u_out[m] = c + alpha * (s - 6.0f * c);
}

__device__ __forceinline__ void load8(const float* __restrict__ u, unsigned m, float* v)
{
    const float4 a = __ldg(reinterpret_cast<const float4*>(u + m));
    const float4 b = __ldg(reinterpret_cast<const float4*>(u + m + 4));
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
    v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}

// Brick index (9 bits) inside a 16^3 cube from 3-bit brick coordinates: bits 0/3/6 = x.
__device__ __forceinline__ unsigned dil3(unsigned v) { return (v & 1u) | ((v & 2u) << 2) | ((v & 4u) << 4); }
__device__ __forceinline__ unsigned brick_of(unsigned bx, unsigned by, unsigned bz) { return dil3(bx) | (dil3(by) << 1) | (dil3(bz) << 2); }

extern "C" __global__ void MORTON_BOUNDS morton_stencil(const float* __restrict__ u_in, float* __restrict__ u_out, unsigned n, unsigned log_n, float alpha)
{
    const unsigned cells = n * n * n;  // log_n <= 10: fits 32 bits
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned nthreads = gridDim.x * blockDim.x;
    if (log_n < 3u) {
        for (unsigned m = tid; m < cells; m += nthreads) cell_small(u_in, u_out, m, n, log_n, alpha);
        return;
    }

#if MV == 2
#if BX != 512
#error "MV=2 needs BX=512 (one thread per brick of a 16^3 cube)"
#endif
    if (log_n >= 4u) {
        __shared__ float s[8][512 + 384];  // [cell in brick][own brick 0..511 | halo 512 + dir*64 + f]
        const unsigned fullc = (1u << (3u * log_n)) - 1u;
        const unsigned CX = 0x49249249u & fullc, CY = 0x92492492u & fullc, CZ = 0x24924924u & fullc;
        const unsigned t = threadIdx.x;
        const unsigned bx = (t & 1u) | ((t >> 2) & 2u) | ((t >> 4) & 4u);
        const unsigned by = ((t >> 1) & 1u) | ((t >> 3) & 2u) | ((t >> 5) & 4u);
        const unsigned bz = ((t >> 2) & 1u) | ((t >> 4) & 2u) | ((t >> 6) & 4u);
        // Brick column of each neighbour brick (own cube or halo slot).
        const unsigned cxm = bx > 0u ? brick_of(bx - 1u, by, bz) : 512u + 0u * 64u + by + 8u * bz;
        const unsigned cxp = bx < 7u ? brick_of(bx + 1u, by, bz) : 512u + 1u * 64u + by + 8u * bz;
        const unsigned cym = by > 0u ? brick_of(bx, by - 1u, bz) : 512u + 2u * 64u + bx + 8u * bz;
        const unsigned cyp = by < 7u ? brick_of(bx, by + 1u, bz) : 512u + 3u * 64u + bx + 8u * bz;
        const unsigned czm = bz > 0u ? brick_of(bx, by, bz - 1u) : 512u + 4u * 64u + bx + 8u * by;
        const unsigned czp = bz < 7u ? brick_of(bx, by, bz + 1u) : 512u + 5u * 64u + bx + 8u * by;
        // Halo job of threads 0..383: face brick (dir, f) of a neighbour cube.
        const unsigned hdir = t >> 6, ha = t & 7u, hb = (t >> 3) & 7u;
        unsigned hbrick = 0u;
        if (hdir == 0u) hbrick = brick_of(7u, ha, hb);
        else if (hdir == 1u) hbrick = brick_of(0u, ha, hb);
        else if (hdir == 2u) hbrick = brick_of(ha, 7u, hb);
        else if (hdir == 3u) hbrick = brick_of(ha, 0u, hb);
        else if (hdir == 4u) hbrick = brick_of(ha, hb, 7u);
        else hbrick = brick_of(ha, hb, 0u);

        const unsigned ncube = cells >> 12;
        bool rev = false;
#if REV
        rev = u_in > u_out;
#endif
        for (unsigned w = blockIdx.x; w < ncube; w += gridDim.x) {  // block-uniform
            const unsigned cube = rev ? ncube - 1u - w : w;
            const unsigned cb = cube << 12;
            const unsigned m0 = cb | (t << 3);
            float v[8], h[8];
            load8(u_in, m0, v);
            const unsigned xc = cb & CX, yc = cb & CY, zc = cb & CZ;
            bool hv = false;
            unsigned nb = 0u;
            if (hdir == 0u) { hv = xc != 0u; nb = ((xc - 0x1000u) & CX) | (cb & ~CX); }
            else if (hdir == 1u) { hv = (xc | (CX & 0xfffu)) != CX; nb = (((xc | ~CX) + 0x1000u) & CX) | (cb & ~CX); }
            else if (hdir == 2u) { hv = yc != 0u; nb = ((yc - 0x2000u) & CY) | (cb & ~CY); }
            else if (hdir == 3u) { hv = (yc | (CY & 0xfffu)) != CY; nb = (((yc | ~CY) + 0x2000u) & CY) | (cb & ~CY); }
            else if (hdir == 4u) { hv = zc != 0u; nb = ((zc - 0x4000u) & CZ) | (cb & ~CZ); }
            else if (hdir == 5u) { hv = (zc | (CZ & 0xfffu)) != CZ; nb = (((zc | ~CZ) + 0x4000u) & CZ) | (cb & ~CZ); }
            if (hv) load8(u_in, nb | (hbrick << 3), h);
            __syncthreads();  // the previous cube's reads of s are done
#pragma unroll
            for (int k = 0; k < 8; ++k) s[k][t] = v[k];
            if (hv) {
#pragma unroll
                for (int k = 0; k < 8; ++k) s[k][512u + t] = h[k];
            }
            __syncthreads();
            const unsigned xm = m0 & CX, ym = m0 & CY, zm = m0 & CZ;
            const bool xlo = xm == 0u, xhi = (xm | 1u) == CX;
            const bool ylo = ym == 0u, yhi = (ym | 2u) == CY;
            const bool zlo = zm == 0u, zhi = (zm | 4u) == CZ;
            float o[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                const int x0 = k & 1, y0 = (k >> 1) & 1, z0 = k >> 2;
                const float c = v[k];
                const float wxm = x0 ? v[k - 1] : s[k + 1][cxm];
                const float wxp = x0 ? s[k - 1][cxp] : v[k + 1];
                const float wym = y0 ? v[k - 2] : s[k + 2][cym];
                const float wyp = y0 ? s[k - 2][cyp] : v[k + 2];
                const float wzm = z0 ? v[k - 4] : s[k + 4][czm];
                const float wzp = z0 ? s[k - 4][czp] : v[k + 4];
                const bool face = (x0 ? xhi : xlo) || (y0 ? yhi : ylo) || (z0 ? zhi : zlo);
                o[k] = face ? c : c + alpha * (wxm + wxp + wym + wyp + wzm + wzp - 6.0f * c);
            }
            *reinterpret_cast<float4*>(u_out + m0) = make_float4(o[0], o[1], o[2], o[3]);
            *reinterpret_cast<float4*>(u_out + m0 + 4) = make_float4(o[4], o[5], o[6], o[7]);
        }
        return;
    }
#endif
    const unsigned full = (1u << (3u * log_n)) - 1u;
    const unsigned MX = 0x49249249u & full;  // bit lanes of x (bits 0, 3, 6, ...)
    const unsigned MY = 0x92492492u & full;  // y (bits 1, 4, 7, ...)
    const unsigned MZ = 0x24924924u & full;  // z (bits 2, 5, 8, ...)
    // Lane bits inside a warp's 256-cell block: bit0 = x1, bit1 = y1, bit2 = z1, bit3 = x2, bit4 = y2.
    const unsigned LX = 9u, LY = 18u, LZ = 4u;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned lx = lane & LX, ly = lane & LY, lz = lane & LZ;
    // In-warp neighbour bricks (dilated +-1 on the lane's bit lanes) and whether they exist.
    const bool in_xm = lx != 0u, in_xp = lx != LX;
    const bool in_ym = ly != 0u, in_yp = ly != LY;
    const bool in_zm = lz != 0u, in_zp = lz == 0u;
    const unsigned s_xm = in_xm ? (((lx - 1u) & LX) | (lane & ~LX)) : lane;
    const unsigned s_xp = in_xp ? ((((lx | ~LX) + 1u) & LX) | (lane & ~LX)) : lane;
    const unsigned s_ym = in_ym ? (((ly - 2u) & LY) | (lane & ~LY)) : lane;
    const unsigned s_yp = in_yp ? ((((ly | ~LY) + 2u) & LY) | (lane & ~LY)) : lane;
    const unsigned s_zm = lane & ~LZ;
    const unsigned s_zp = lane | LZ;

    const unsigned nchunks = cells >> 8;  // 256-cell warp blocks
    const unsigned nwarps = nthreads >> 5;
    bool rev = false;
#if REV
    rev = u_in > u_out;  // alternate the sweep direction step by step
#endif
    for (unsigned w = tid >> 5; w < nchunks; w += nwarps) {  // warp-uniform loop
        const unsigned wc = rev ? nchunks - 1u - w : w;
        const unsigned m0 = (wc << 8) | (lane << 3);
        float v[8];
        load8(u_in, m0, v);

        const unsigned xm = m0 & MX, ym = m0 & MY, zm = m0 & MZ;
        const bool xlo = xm == 0u, xhi = (xm | 1u) == MX;  // brick holds x == 0 / x == N-1
        const bool ylo = ym == 0u, yhi = (ym | 2u) == MY;
        const bool zlo = zm == 0u, zhi = (zm | 4u) == MZ;

#if MV == 1
        // Issue the face-brick loads first (independent of v), then shuffle, then patch.
        const bool g_xm = !in_xm && !xlo, g_xp = !in_xp && !xhi;
        const bool g_ym = !in_ym && !ylo, g_yp = !in_yp && !yhi;
        const bool g_zm = !in_zm && !zlo, g_zp = !in_zp && !zhi;
        float txm[8], txp[8], tym[8], typ[8];
        float4 tzm = make_float4(0.0f, 0.0f, 0.0f, 0.0f), tzp = tzm;
        if (g_xm) load8(u_in, ((xm - 8u) & MX) | (m0 & ~MX), txm);
        if (g_xp) load8(u_in, (((xm | ~MX) + 8u) & MX) | (m0 & ~MX), txp);
        if (g_ym) load8(u_in, ((ym - 16u) & MY) | (m0 & ~MY), tym);
        if (g_yp) load8(u_in, (((ym | ~MY) + 16u) & MY) | (m0 & ~MY), typ);
        if (g_zm) tzm = __ldg(reinterpret_cast<const float4*>(u_in + ((((zm - 32u) & MZ) | (m0 & ~MZ)) + 4u)));  // z0 = 1 half
        if (g_zp) tzp = __ldg(reinterpret_cast<const float4*>(u_in + ((((zm | ~MZ) + 32u) & MZ) | (m0 & ~MZ))));  // z0 = 0 half
        float XM[4], XP[4], YM[4], YP[4], ZM[4], ZP[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int ky = (j & 1) | ((j >> 1) << 2);  // cells with y0 = 0: 0, 1, 4, 5
            XM[j] = __shfl_sync(FULLMASK, v[2 * j + 1], s_xm);
            XP[j] = __shfl_sync(FULLMASK, v[2 * j], s_xp);
            YM[j] = __shfl_sync(FULLMASK, v[ky + 2], s_ym);
            YP[j] = __shfl_sync(FULLMASK, v[ky], s_yp);
            ZM[j] = __shfl_sync(FULLMASK, v[j + 4], s_zm);
            ZP[j] = __shfl_sync(FULLMASK, v[j], s_zp);
        }
        if (g_xm) { XM[0] = txm[1]; XM[1] = txm[3]; XM[2] = txm[5]; XM[3] = txm[7]; }
        if (g_xp) { XP[0] = txp[0]; XP[1] = txp[2]; XP[2] = txp[4]; XP[3] = txp[6]; }
        if (g_ym) { YM[0] = tym[2]; YM[1] = tym[3]; YM[2] = tym[6]; YM[3] = tym[7]; }
        if (g_yp) { YP[0] = typ[0]; YP[1] = typ[1]; YP[2] = typ[4]; YP[3] = typ[5]; }
        if (g_zm) { ZM[0] = tzm.x; ZM[1] = tzm.y; ZM[2] = tzm.z; ZM[3] = tzm.w; }
        if (g_zp) { ZP[0] = tzp.x; ZP[1] = tzp.y; ZP[2] = tzp.z; ZP[3] = tzp.w; }
#else
        // Face values from the 6 neighbour bricks: shuffle from the neighbour lane ...
        float XM[4], XP[4], YM[4], YP[4], ZM[4], ZP[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int ky = (j & 1) | ((j >> 1) << 2);  // cells with y0 = 0: 0, 1, 4, 5
            XM[j] = __shfl_sync(FULLMASK, v[2 * j + 1], s_xm);  // -x brick, x0 = 1 cells
            XP[j] = __shfl_sync(FULLMASK, v[2 * j], s_xp);      // +x brick, x0 = 0 cells
            YM[j] = __shfl_sync(FULLMASK, v[ky + 2], s_ym);     // -y brick, y0 = 1 cells
            YP[j] = __shfl_sync(FULLMASK, v[ky], s_yp);         // +y brick, y0 = 0 cells
            ZM[j] = __shfl_sync(FULLMASK, v[j + 4], s_zm);      // -z brick, z0 = 1 cells
            ZP[j] = __shfl_sync(FULLMASK, v[j], s_zp);          // +z brick, z0 = 0 cells
        }
        // ... or, on the warp block's faces (inside the cube), load it (L1/L2 hit).
        float t[8];
        if (!in_xm && !xlo) {
            load8(u_in, ((xm - 8u) & MX) | (m0 & ~MX), t);
            XM[0] = t[1]; XM[1] = t[3]; XM[2] = t[5]; XM[3] = t[7];
        }
        if (!in_xp && !xhi) {
            load8(u_in, (((xm | ~MX) + 8u) & MX) | (m0 & ~MX), t);
            XP[0] = t[0]; XP[1] = t[2]; XP[2] = t[4]; XP[3] = t[6];
        }
        if (!in_ym && !ylo) {
            load8(u_in, ((ym - 16u) & MY) | (m0 & ~MY), t);
            YM[0] = t[2]; YM[1] = t[3]; YM[2] = t[6]; YM[3] = t[7];
        }
        if (!in_yp && !yhi) {
            load8(u_in, (((ym | ~MY) + 16u) & MY) | (m0 & ~MY), t);
            YP[0] = t[0]; YP[1] = t[1]; YP[2] = t[4]; YP[3] = t[5];
        }
        if (!in_zm && !zlo) {
            load8(u_in, ((zm - 32u) & MZ) | (m0 & ~MZ), t);
            ZM[0] = t[4]; ZM[1] = t[5]; ZM[2] = t[6]; ZM[3] = t[7];
        }
        if (!in_zp && !zhi) {
            load8(u_in, (((zm | ~MZ) + 32u) & MZ) | (m0 & ~MZ), t);
            ZP[0] = t[0]; ZP[1] = t[1]; ZP[2] = t[2]; ZP[3] = t[3];
        }

#endif
        float o[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            const int x0 = k & 1, y0 = (k >> 1) & 1, z0 = k >> 2;
            const int jy = (k & 1) | ((k >> 2) << 1);  // index among the 4 cells of a y-face
            const float c = v[k];
            const float wxm = x0 ? v[k - 1] : XM[k >> 1];
            const float wxp = x0 ? XP[k >> 1] : v[k + 1];
            const float wym = y0 ? v[k - 2] : YM[jy];
            const float wyp = y0 ? YP[jy] : v[k + 2];
            const float wzm = z0 ? v[k - 4] : ZM[k & 3];
            const float wzp = z0 ? ZP[k & 3] : v[k + 4];
            const bool face = (x0 ? xhi : xlo) || (y0 ? yhi : ylo) || (z0 ? zhi : zlo);
            o[k] = face ? c : c + alpha * (wxm + wxp + wym + wyp + wzm + wzp - 6.0f * c);
        }
        *reinterpret_cast<float4*>(u_out + m0) = make_float4(o[0], o[1], o[2], o[3]);
        *reinterpret_cast<float4*>(u_out + m0 + 4) = make_float4(o[4], o[5], o[6], o[7]);
    }
}
