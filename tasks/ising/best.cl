// ising best-known OpenCL kernel: an OpenCL C 1.2 port of the default path of best.cu (ALG = 1)
// for the same task: checkerboard Metropolis, one colour (half sweep) per launch, in place, bit-exact
// with the host's hash RNG and float32 acceptance table (read from p_accept, never recomputed).
//
// WHAT MAKES IT FAST (the ideas of best.cu, kept)
// - Multi-spin / row blocking: a work-item owns a 16-byte strip of a row (one uint4) and RY
//   consecutive rows. It loads RY + 2 strips (its rows and the rows above and below) as 16-byte
//   vectors, plus the two edge bytes of each of its rows, all before any arithmetic. Neighbouring
//   work-items along x take neighbouring strips, so a row is read in contiguous 16-byte pieces.
//   A strip is written back once, as one uint4, and only if a spin in it flipped.
// - SIMD within a register: spins are bytes 0x01 / 0xFF, so bits 2..5 of a byte say the spin's
//   sign. The left / right / up / down neighbours of four sites at once (the word shifted by one
//   byte with the edge byte patched in, and the words of the rows above and below) are merged by
//   three bit selects into one word, and one xor-and with the strip gives, per byte, 4 * pattern
//   (pattern = which of L, R, U, D differ). The pattern indexes a 16-entry local table of negated
//   integer thresholds, filled once per work-group from p_accept.
// - Only the launch's colour is hashed (8 of 16 sites per strip). The float test u < pa with
//   u = (x >> 8) * 2^-24 equals the exact integer test (x >> 8) < ceil(pa * 2^24) (pa * 2^24 is
//   exact in float32): no int-to-float conversion. The test is the sign bit of (x >> 8) - thr and
//   the flip is a masked xor, with no branch. A strip's first site is a multiple of 16, so
//   site + k == site ^ k and fmix32's first step x ^= x >> 16 folds into one per-row constant;
//   fmix32(seed + step * 0x9E3779B9) is computed once per work-item.
// - HMUL (as in best.cu): 1 writes the hash's right shifts as mul_hi by 2^(32-k) with run-time
//   constants read from local memory (on NVIDIA hardware this moves work from the ALU pipe to the
//   FMA pipe); 2 also moves the flip mask to multiplies; 0 is plain shifts. Same results in all.
// - Any nx not a multiple of 16 (no profile has one) takes a site-by-site general path with the
//   same arithmetic; ALG = 0 of best.cu (the plain counting fallback) is not ported.
// Work-items of one work-group do not need to run in lockstep: the only shared data is the table,
// written before one barrier that every work-item reaches before any returns. Other work-items'
// strips are read only for the other colour's bytes, which no one changes in this launch.
//
// CHECKED (CPU OpenCL: PoCL 3.1 on a 2-core EPYC, kevo snapshot, eval --check-only, every size
// incl. held-out, verdict ok, zero differing spins everywhere):
//   profile small (64x48x20, 96x80x15, 128x100x10, held-out 112x72x12): ok
//   profile paper (256x256x100, 1024x1024x50, 2048x2048x25, held-out 1536x1536x40): ok
//   profile large (16384x8192x20, 12288x12288x10, 16384x16384x10, held-out 14336x10240x12): ok
//   (11.5 min for the four sizes, CPU reference included)
//   knobs at small: BX=16 BY=1 RY=1 HMUL=0, BX=64 BY=8 RY=4 HMUL=1, BX=16 BY=4 RY=2 HMUL=2,
//   BX=64 BY=1 RY=8 HMUL=0, BX=32 BY=8 RY=1 HMUL=1: ok; at paper HMUL=0, HMUL=0 RY=1 BY=8 and
//   HMUL=0 BX=64 BY=4 RY=2: ok. No profile has nx % 16 != 0, so a separate host test (not kevo)
//   ran the general path and small fast-path lattices (nx x ny = 18x6, 50x34, 130x2, 16x2, 16x18,
//   48x10, 34x50; 3-6 sweeps, beta 0.3-0.6) at four knob sets against a C replay of the
//   reference: bit-exact (and a deliberately broken copy was caught).
// NOT TIMED ON A GPU. On the CPU above the GPU path with HMUL=2 was about 1.5x slower than the
// seed (1024^2 x 50: 1.49 s against 1.01 s): HMUL=2's mul_hi are a win on NVIDIA's integer
// pipes, not on AVX-512; HMUL=0 there was 2x faster than the seed (0.50 s).
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture; every other implementation gets
// the GPU path above). HMUL=auto (the default) is 0 there and 2 on the GPU path,
// and the threshold table is built by every work-item in private memory instead of once per
// group in local memory, so the CPU path has no barrier. Work-items that own no strip return
// before building it (at nx = 64, 28 of a group's 32 columns), and it is filled from its 5
// distinct thresholds: building all 20 entries in every work-item cost more than the spin updates
// at the small sizes (it left this path level with the seed there; 2.1-2.4x after, docs/best-kernels.md).
// The launch geometry is the GPU path's on both paths (the host reads one set of directives).
// PoCL runs a work-group as loops over its work-items, split at every barrier, and vectorises
// such a loop only when a work-item's code has no loop of its own.
// kevo: tune PATH auto gpu cpu
// kevo: tune BX 32 64 16
// kevo: tune BY 2 4 8 1
// kevo: tune RY 8 4 2 1
// kevo: tune HMUL auto 2 1 0
// kevo: launch ising_step block=BX,BY per_thread=16,RY
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
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 2
#endif
#ifndef RY
#define RY 8
#endif
#ifndef HMUL
#define HMUL auto
#endif
// HMUL=auto: 0 on the CPU path (plain shifts: AVX-512 has no use for mul_hi), 2 on the GPU path.
#define HMUL_auto (CPU_PATH ? 0 : 2)
#define HMUL_0 0
#define HMUL_1 1
#define HMUL_2 2
#define HMUL_V_(h) HMUL_##h
#define HMUL_V(h) HMUL_V_(h)
#define HM HMUL_V(HMUL)

// Murmur3's 32-bit finaliser: the exact hash the reference uses.
uint fmix32(uint x)
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
uint threshold(float p)
{
    const float t = ceil(p * 16777216.0f);
    return t <= 0.0f ? 0u : (t >= 16777216.0f ? 16777216u : (uint)t);
}

#if HM
#define SHR13(v) mul_hi((v), K13)
#define SHR16(v) mul_hi((v), K16)
#define SHR8(v) mul_hi((v), K24)
#else
#define SHR13(v) ((v) >> 13)
#define SHR16(v) ((v) >> 16)
#define SHR8(v) ((v) >> 8)
#endif

__kernel void ising_step(__global char* spins, __global const float* p_accept, uint nx, uint ny, uint step, uint seed)
{
    // Entries 0..15: negated thresholds by neighbour pattern (bit 0: L, 1: R, 2: U, 3: D differ);
    // entries 16..19: the constants 2^19, 2^16, 2^24, 2 for HMUL (run-time values, so that the
    // compiler keeps the mul_hi). Filled before any work-item returns.
    // The CPU path keeps its own copy in private memory, so it has no barrier (PoCL splits a
    // work-group's loop over its work-items at every barrier).
#if CPU_PATH
    // Work-items past the lattice (most of a group at small nx) return before building the table,
    // and the five distinct thresholds are computed once each.
    if ((uint)get_global_id(0) * 16u >= nx || (uint)get_global_id(1) * RY >= ny) return;
    uint nthr5[5];
    for (uint e = 0; e < 5u; ++e) nthr5[e] = 0u - threshold(p_accept[e]);
    uint nthr_s[20];
    for (uint e = 0; e < 20u; ++e)
        nthr_s[e] = e < 16u ? nthr5[4u - popcount(e)]
                            : (e == 16u ? (1u << 19) : e == 17u ? (1u << 16) : e == 18u ? (1u << 24) : 2u);
#else
    __local uint nthr_s[20];
    const uint lsz = (uint)(get_local_size(0) * get_local_size(1));
    for (uint e = (uint)(get_local_id(1) * get_local_size(0) + get_local_id(0)); e < 20u; e += lsz)
        nthr_s[e] = e < 16u ? 0u - threshold(p_accept[4u - popcount(e)])
                            : (e == 16u ? (1u << 19) : e == 17u ? (1u << 16) : e == 18u ? (1u << 24) : 2u);
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    const uint x0 = (uint)get_global_id(0) * 16u;  // first site of this work-item's strip
    const uint jb = (uint)get_global_id(1) * RY;   // first of this work-item's rows
    if (x0 >= nx || jb >= ny) return;  // the global size is rounded up to whole work-groups
    const uint colour = step & 1u;
    const uint sh = fmix32(seed + step * 0x9E3779B9u);

    if ((nx & 15u) == 0u) {
        // Fast path: rows are whole 16-byte strips, every strip 16-byte aligned.
        const uint xl = x0 == 0 ? nx - 1 : x0 - 1;    // left neighbour of byte 0
        const uint xr = x0 + 16 == nx ? 0 : x0 + 16;  // right neighbour of byte 15
        uint4 row[RY + 2];
        uint eL[RY], eR[RY];
        // All loads first. Entry r of `row` is lattice row jb + r - 1 (wrapped); rows past ny are
        // clamped (loaded but never updated or stored).
        for (int r = 0; r < RY + 2; ++r) {
            uint j = jb + (uint)r;  // = lattice row jb + r - 1, offset by one to stay unsigned
            j = j == 0 ? ny - 1 : j - 1;
            if (j >= ny) j = j - ny < ny ? j - ny : ny - 1;  // wrap the row below the last one
            row[r] = *(__global const uint4*)(spins + (size_t)j * nx + x0);
        }
        for (int r = 0; r < RY; ++r) {
            const uint j = min(jb + (uint)r, ny - 1);
            eL[r] = (uint)(uchar)spins[(size_t)j * nx + xl];
            eR[r] = (uint)(uchar)spins[(size_t)j * nx + xr];
        }
#if HM
        const uint K13 = nthr_s[16], K16 = nthr_s[17], K24 = nthr_s[18];
#endif
#if HM >= 2
        const uint K2 = nthr_s[19];
#endif
        const uint shc = sh ^ (sh >> 16);
        for (int r = 0; r < RY; ++r) {
            const uint j = jb + (uint)r;
            if (j >= ny) break;
            const uint4 u = row[r], c = row[r + 1], dn = row[r + 2];
            const uint w[4] = {c.x, c.y, c.z, c.w};
            const uint up[4] = {u.x, u.y, u.z, u.w};
            const uint dw[4] = {dn.x, dn.y, dn.z, dn.w};
            const uint b0 = (colour ^ j) & 1u;  // byte parity of this row's sites of the colour
            const uint site = j * nx + x0;      // a multiple of 16 (mod 2^32): site + k == site ^ k
            const uint cc = shc ^ site ^ (site >> 16) ^ b0;  // fmix32 input after x ^= x >> 16
            const uint sb = 8u * b0 + 2u;                    // bit of byte b0's pattern
            const uint mk0 = 0xFEu << (8u * b0), mk1 = mk0 << 16;  // 0x01 <-> 0xFF of bytes b0, b0 + 2
            uint o[4];
            for (int q = 0; q < 4; ++q) {
                const uint L = (w[q] << 8) | (q == 0 ? eL[r] : (w[q - 1] >> 24));  // byte k: site x+k-1
                const uint R = (w[q] >> 8) | ((q == 3 ? eR[r] : w[q + 1]) << 24);  // byte k: site x+k+1
                // bit 2 <- L, bit 3 <- R, bit 4 <- U, bit 5 <- D (bit selects; xor with w afterwards)
                const uint N1 = (L & 0x04040404u) | (R & ~0x04040404u);
                const uint N2 = (N1 & 0x0C0C0C0Cu) | (up[q] & ~0x0C0C0C0Cu);
                const uint N3 = (N2 & 0x1C1C1C1Cu) | (dw[q] & ~0x1C1C1C1Cu);
                const uint P = (w[q] ^ N3) & 0x3C3C3C3Cu;  // per byte: 4 * pattern
                uint ow = w[q];
#if HM >= 2
                uint fl = 0u;
#endif
                for (int m = 0; m < 2; ++m) {
                    const uint nthr = nthr_s[(P >> (sb + 16u * (uint)m)) & 15u];
                    uint x = (cc ^ (uint)(4 * q + 2 * m)) * 0x85EBCA6Bu;
                    x ^= SHR13(x);
                    x *= 0xC2B2AE35u;
                    x ^= SHR16(x);
                    const uint v = SHR8(x) + nthr;  // (x >> 8) - thr: negative iff accepted
#if HM >= 2
                    fl += mul_hi(v, K2) * (m ? mk1 : mk0);  // v >> 31 (0/1) times the byte's mask
#else
                    ow ^= (uint)((int)v >> 31) & (m ? mk1 : mk0);
#endif
                }
#if HM >= 2
                ow ^= fl;
#endif
                o[q] = ow;
            }
            if ((o[0] ^ w[0]) | (o[1] ^ w[1]) | (o[2] ^ w[2]) | (o[3] ^ w[3]))
                *(__global uint4*)(spins + (size_t)j * nx + x0) = (uint4)(o[0], o[1], o[2], o[3]);
        }
        return;
    }

    // General path (nx not a multiple of 16): site by site, the same arithmetic.
    const uint xe = min(x0 + 16u, nx);
    for (int r = 0; r < RY; ++r) {
        const uint j = jb + (uint)r;
        if (j >= ny) break;
        const uint jd = j == 0 ? ny - 1 : j - 1, ju = j + 1 == ny ? 0 : j + 1;
        for (uint i = x0 + ((x0 + j + colour) & 1u); i < xe; i += 2) {
            const uint left = i == 0 ? nx - 1 : i - 1, right = i + 1 == nx ? 0 : i + 1;
            const uint s = j * nx + i;
            const int sv = spins[s];
            const int h = spins[j * nx + left] + spins[j * nx + right] + spins[jd * nx + i] + spins[ju * nx + i];
            const uint nd = (uint)(4 - sv * h) / 2u;     // number of differing neighbours
            const uint nthr = nthr_s[(1u << nd) - 1u];  // any pattern with nd bits set
            if ((int)((fmix32(sh ^ s) >> 8) + nthr) < 0) spins[s] = (char)(-sv);
        }
    }
}
