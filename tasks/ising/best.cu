// ising best-known kernel for the H200: checkerboard Metropolis, one colour (half sweep) per launch,
// bit-exact with the host's hash RNG and float32 acceptance table.
//
// WHAT MADE IT FAST
// - One thread owns a 16-byte strip of a row (uint4) and RY consecutive rows: it loads RY+2 strips
//   (its rows plus the rows above and below) as coalesced 16-byte vectors (a warp reads 512 B of a
//   row per instruction) and two edge bytes per row; every load is issued before any arithmetic.
//   Each strip is written back once as a uint4, and only when a spin in it flipped.
// - SIMD-within-a-register neighbour counting: with spins 0x01/0xFF, (s ^ n) & 0x02 is 2 when the
//   neighbour differs, so four XOR/AND/ADDs on 32-bit words count the differing neighbours of four
//   sites at once (left/right neighbours are the word shifted by one byte, the edge bytes patched
//   in). s*h = 4 - 2*ndiff, so the table index is 4 - ndiff.
// - Only the launch's colour is hashed (8 of 16 sites per strip). The float test u < pa with
//   u = (x>>8) * 2^-24 is replaced by the exact integer test (x>>8) < ceil(pa * 2^24) (pa * 2^24 is
//   exact in float32), so there is no int->float conversion per site; the five thresholds are
//   computed once per thread from the p_accept buffer and kept in registers.
// - The step hash fmix32(seed + step*0x9E3779B9) is computed once per thread.
// - The counting and the threshold test above are the plain fallback, ALG = 0; the default path
//   is ALG = 1, a leaner integer version of both (see ALG below).
// The model counts 2 B/site/sweep, but each of the two launches of a sweep must read the whole
// lattice and write (most of) it back: ~4 B/site/sweep of real DRAM traffic, so 0.5 of the
// bandwidth is the ceiling of this model, and the hash (~25 integer ops per updated site) keeps it
// near the integer issue limit. Measured on the H200 (large profile, fraction of the measured
// 4333 GB/s static ceiling): 0.374-0.390 (held-out 14336x10240x12: 0.376), at the low end of the
// ~0.38-0.45 estimate.
// kevo: tune BX 32 64 16
// kevo: tune BY 2 4 8 1
// kevo: tune RY 8 4 2 1
// kevo: tune ALG 1 0
// kevo: tune HMUL 2 1 0
// kevo: launch ising_step block=BX,BY per_thread=16,RY
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 2
#endif
#ifndef RY
#define RY 8
#endif
// ALG = 1 (the default path; ALG = 0 is the plain fallback of the header): a leaner integer path
// for the fast case. The kernel is integer-issue bound (Hopper: LOP3/SHF/IADD3/ISETP/SEL run 16
// lanes/clk per scheduler on the ALU pipe, IMAD/IMAD.HI 16 lanes/clk on the FMA pipe, in
// parallel), so ALG = 1 removes ALU ops:
// - the neighbour pattern (which of L, R, U, D differ) is built by 3 bit-select LOP3s + 1 xor-and
//   per word (no adds): byte = 4 * pattern (bits 2..5), a byte offset into a 16-entry shared
//   table of negated thresholds (entry p: -thr(p_accept[4 - popc(p)])); one PRMT + one LDS per site
//   instead of ~8 ALU ops of the select tree;
// - the hash input is site ^ k (a strip's first site is a multiple of 16), so fmix32's first
//   x ^= x >> 16 is folded into one per-strip constant: per site x1 = cc ^ imm;
// - the test (x >> 8) < thr is the sign of hi(x * 2^24) + (-thr) (one IMAD.HI with addend), the flip
//   is w ^= (sign >> 31) & mask (no predicate, no ISETP).
// HMUL = 1 additionally writes the hash's right shifts as mul.hi by 2^(32-k) with run-time constants
// (FMA pipe instead of ALU), to balance the two integer pipes; HMUL = 2 also moves the flip to the
// FMA pipe: t = hi(v * 2) = v >> 31, w ^= t0 * mask0 + t1 * mask1 (2 IMAD.HI + 2 IMAD + 1 LOP3 per
// word instead of 2 SHF + 2 LOP3).
// Timed at the held-out 14336x10240x12: ALG=0 HMUL=0 RY=4 BY=4 (the old path) 0.307, ALG=1 HMUL=2
// 0.351, ALG=1 HMUL=1 0.350, ALG=1 HMUL=2 RY=8 BY=2 (the defaults) 0.376.
#ifndef ALG
#define ALG 1
#endif
#ifndef HMUL
#define HMUL 2
#endif

// Murmur3's 32-bit finaliser: the exact hash the reference uses.
__device__ __forceinline__ unsigned fmix32(unsigned x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

// Integer threshold equivalent to the float test (float)(k) * 2^-24 < p for integers 0 <= k < 2^24:
// p * 2^24 is exact in float32, so the test is k < p*2^24, i.e. k < ceil(p * 2^24).
__device__ __forceinline__ unsigned threshold(float p)
{
    const float t = ceilf(p * 16777216.0f);
    return t <= 0.0f ? 0u : (t >= 16777216.0f ? 16777216u : (unsigned)t);
}

// Threshold for 2*ndiff = d2 (0, 2, 4, 6, 8): the table index is 4 - ndiff.
__device__ __forceinline__ unsigned pick(unsigned d2, unsigned t0, unsigned t1, unsigned t2, unsigned t3, unsigned t4)
{
    const unsigned a = (d2 & 2u) ? t3 : t4;  // ndiff 1 : 0
    const unsigned b = (d2 & 2u) ? t1 : t2;  // ndiff 3 : 2
    const unsigned c = (d2 & 4u) ? b : a;
    return (d2 & 8u) ? t0 : c;               // ndiff 4
}

// Updates the sites of one 32-bit word (4 bytes, little endian: byte k is site x+k) whose byte
// offset within the word has parity b0. d holds 2*ndiff per byte; site0 is the site index of byte 0.
__device__ __forceinline__ unsigned update_word(unsigned w, unsigned d, unsigned b0, unsigned site0, unsigned sh,
                                                unsigned t0, unsigned t1, unsigned t2, unsigned t3, unsigned t4)
{
#pragma unroll
    for (unsigned m = 0; m < 2; ++m) {
        const unsigned k = b0 + 2 * m;
        const unsigned thr = pick((d >> (8 * k)) & 0xFu, t0, t1, t2, t3, t4);
        const unsigned x = fmix32(sh ^ (site0 + k));
        if ((x >> 8) < thr) w ^= 0xFEu << (8 * k);  // 0x01 <-> 0xFF
    }
    return w;
}

extern "C" __global__ void __launch_bounds__(BX * BY) ising_step(signed char* spins, const float* p_accept, unsigned nx,
                                                                  unsigned ny, unsigned step, unsigned seed)
{
#if ALG
    // 16-entry table of negated thresholds by neighbour pattern (filled before any thread returns).
#if BX < 16
#error "ALG = 1 fills its 16-entry table with threadIdx.x < 16: BX >= 16"
#endif
    // Entries 16..19: the constants 2^19, 2^16, 2^24, 2 for HMUL, read back from shared memory so
    // that the compiler cannot turn the mul.hi back into shifts.
    __shared__ unsigned nthr_s[20];
    if (threadIdx.y == 0 && threadIdx.x < 16u) {
        const unsigned nd = __popc(threadIdx.x);
        nthr_s[threadIdx.x] = 0u - threshold(__ldg(p_accept + (4u - nd)));
        if (threadIdx.x < 4u) nthr_s[16 + threadIdx.x] = threadIdx.x == 0 ? 1u << 19 : threadIdx.x == 1 ? 1u << 16 : threadIdx.x == 2 ? 1u << 24 : 2u;
    }
    __syncthreads();
#endif
    const unsigned x0 = (blockIdx.x * BX + threadIdx.x) * 16u;  // first site of this thread's strip
    const unsigned jb = (blockIdx.y * BY + threadIdx.y) * RY;   // first of this thread's rows
    if (x0 >= nx || jb >= ny) return;  // the grid is rounded up to whole blocks
    const unsigned colour = step & 1u;
    const unsigned sh = fmix32(seed + step * 0x9E3779B9u);
    const unsigned t0 = threshold(__ldg(p_accept + 0)), t1 = threshold(__ldg(p_accept + 1));
    const unsigned t2 = threshold(__ldg(p_accept + 2)), t3 = threshold(__ldg(p_accept + 3));
    const unsigned t4 = threshold(__ldg(p_accept + 4));

    if ((nx & 15u) == 0u) {
        // Fast path: rows are whole 16-byte strips, every strip 16-byte aligned.
        const unsigned xl = x0 == 0 ? nx - 1 : x0 - 1;          // left neighbour of byte 0
        const unsigned xr = x0 + 16 == nx ? 0 : x0 + 16;        // right neighbour of byte 15
        uint4 row[RY + 2];
        unsigned eL[RY], eR[RY];
        // All loads first. Row index r+1 of `row` is lattice row jb+r (wrapped); rows past ny are
        // clamped (loaded but never updated or stored).
#pragma unroll
        for (int r = 0; r < RY + 2; ++r) {
            unsigned j = jb + r;  // = lattice row jb + r - 1, offset by one to stay unsigned
            j = j == 0 ? ny - 1 : j - 1;
            if (j >= ny) j = j - ny < ny ? j - ny : ny - 1;  // wrap the row below the last one
            row[r] = *reinterpret_cast<const uint4*>(spins + (size_t)j * nx + x0);
        }
#pragma unroll
        for (int r = 0; r < RY; ++r) {
            const unsigned j = min(jb + r, ny - 1);
            eL[r] = (unsigned char)spins[(size_t)j * nx + xl];
            eR[r] = (unsigned char)spins[(size_t)j * nx + xr];
        }
#if ALG
#if HMUL
        // Run-time constants (from shared memory), so ptxas keeps the mul.hi on the FMA pipe.
        const unsigned K13 = nthr_s[16], K16 = nthr_s[17], K24 = nthr_s[18], K2 = nthr_s[19];
#define SHR13(v) __umulhi((v), K13)
#define SHR16(v) __umulhi((v), K16)
#define SHR8(v) __umulhi((v), K24)
#else
#define SHR13(v) ((v) >> 13)
#define SHR16(v) ((v) >> 16)
#define SHR8(v) ((v) >> 8)
#endif
        const unsigned shc = sh ^ (sh >> 16);
        const char* tb = reinterpret_cast<const char*>(nthr_s);
#pragma unroll
        for (int r = 0; r < RY; ++r) {
            const unsigned j = jb + r;
            if (j >= ny) break;
            const uint4 u = row[r], c = row[r + 1], dn = row[r + 2];
            const unsigned w[4] = {c.x, c.y, c.z, c.w};
            const unsigned up[4] = {u.x, u.y, u.z, u.w};
            const unsigned dw[4] = {dn.x, dn.y, dn.z, dn.w};
            const unsigned b0 = (colour ^ j) & 1u;
            const unsigned site = j * nx + x0;  // a multiple of 16 (mod 2^32): site + k == site ^ k
            const unsigned cc = shc ^ site ^ (site >> 16) ^ b0;  // fmix32 input after x ^= x >> 16
            const unsigned sel0 = 0x4440u | b0, sel1 = 0x4442u | b0;  // byte b0 / b0+2 -> byte 0
            const unsigned mk0 = 0xFEu << (8u * b0), mk1 = mk0 << 16;
            unsigned o[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const unsigned L = __funnelshift_l(q == 0 ? eL[r] << 24 : w[q - 1], w[q], 8);  // byte k: site x+k-1
                const unsigned R = __funnelshift_r(w[q], q == 3 ? eR[r] : w[q + 1], 8);        // byte k: site x+k+1
                // bit 2 <- L, bit 3 <- R, bit 4 <- U, bit 5 <- D (bit selects; xor with w afterwards)
                const unsigned N1 = (L & 0x04040404u) | (R & ~0x04040404u);
                const unsigned N2 = (N1 & 0x0C0C0C0Cu) | (up[q] & ~0x0C0C0C0Cu);
                const unsigned N3 = (N2 & 0x1C1C1C1Cu) | (dw[q] & ~0x1C1C1C1Cu);
                const unsigned P = (w[q] ^ N3) & 0x3C3C3C3Cu;  // per byte: 4 * pattern
                unsigned ow = w[q];
#if HMUL >= 2
                unsigned fl = 0u;
#endif
#pragma unroll
                for (int m = 0; m < 2; ++m) {
                    const unsigned off = __byte_perm(P, 0u, m ? sel1 : sel0);
                    const unsigned nthr = *reinterpret_cast<const unsigned*>(tb + off);
                    unsigned x = (cc ^ (unsigned)(4 * q + 2 * m)) * 0x85EBCA6Bu;
                    x ^= SHR13(x);
                    x *= 0xC2B2AE35u;
                    x ^= SHR16(x);
                    const unsigned v = SHR8(x) + nthr;  // (x >> 8) - thr: negative iff accepted
#if HMUL >= 2
                    fl += __umulhi(v, K2) * (m ? mk1 : mk0);  // v >> 31 (0/1) times the byte's mask
#else
                    ow ^= (unsigned)((int)v >> 31) & (m ? mk1 : mk0);
#endif
                }
#if HMUL >= 2
                ow ^= fl;
#endif
                o[q] = ow;
            }
            if ((o[0] ^ w[0]) | (o[1] ^ w[1]) | (o[2] ^ w[2]) | (o[3] ^ w[3]))
                *reinterpret_cast<uint4*>(spins + (size_t)j * nx + x0) = make_uint4(o[0], o[1], o[2], o[3]);
        }
        return;
#else
        const unsigned M = 0x02020202u;
#pragma unroll
        for (int r = 0; r < RY; ++r) {
            const unsigned j = jb + r;
            if (j >= ny) break;
            const uint4 u = row[r], c = row[r + 1], dn = row[r + 2];
            const unsigned w[4] = {c.x, c.y, c.z, c.w};
            const unsigned up[4] = {u.x, u.y, u.z, u.w};
            const unsigned dw[4] = {dn.x, dn.y, dn.z, dn.w};
            const unsigned b0 = (colour ^ j) & 1u;  // byte parity of this row's sites of the colour
            const unsigned site = j * nx + x0;       // uint32, as the reference (wraps like it)
            unsigned o[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const unsigned prev = q == 0 ? eL[r] : (w[q - 1] >> 24);
                const unsigned next = q == 3 ? eR[r] : (w[q + 1] & 0xFFu);
                const unsigned L = (w[q] << 8) | prev;
                const unsigned R = (w[q] >> 8) | (next << 24);
                const unsigned d = ((w[q] ^ L) & M) + ((w[q] ^ R) & M) + ((w[q] ^ up[q]) & M) + ((w[q] ^ dw[q]) & M);
                o[q] = update_word(w[q], d, b0, site + 4 * q, sh, t0, t1, t2, t3, t4);
            }
            if ((o[0] ^ w[0]) | (o[1] ^ w[1]) | (o[2] ^ w[2]) | (o[3] ^ w[3]))
                *reinterpret_cast<uint4*>(spins + (size_t)j * nx + x0) = make_uint4(o[0], o[1], o[2], o[3]);
        }
        return;
#endif
    }

    // General path (nx not a multiple of 16): site by site, the same arithmetic.
    const unsigned xe = min(x0 + 16u, nx);
    for (int r = 0; r < RY; ++r) {
        const unsigned j = jb + r;
        if (j >= ny) break;
        const unsigned jd = j == 0 ? ny - 1 : j - 1, ju = j + 1 == ny ? 0 : j + 1;
        for (unsigned i = x0 + ((x0 + j + colour) & 1u); i < xe; i += 2) {
            const unsigned left = i == 0 ? nx - 1 : i - 1, right = i + 1 == nx ? 0 : i + 1;
            const unsigned s = j * nx + i;
            const int sv = spins[s];
            const int h = spins[j * nx + left] + spins[j * nx + right] + spins[jd * nx + i] + spins[ju * nx + i];
            const unsigned nd = (unsigned)(4 - sv * h) / 2u;  // number of differing neighbours
            const unsigned thr = pick(2u * nd, t0, t1, t2, t3, t4);
            if ((fmix32(sh ^ s) >> 8) < thr) spins[s] = (signed char)(-sv);
        }
    }
}
