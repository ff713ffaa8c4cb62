// hmc best-known OpenCL kernel: an OpenCL C 1.2 port of tasks/hmc/best.cu (one HMC step per launch:
// Box-Muller momenta, L leapfrog steps, Metropolis test, for k independent chains), with a CPU path
// for PoCL. The GPU path's performance reasoning is best.cu's, measured on the H200 with CUDA;
// timings of this file are in docs/best-kernels.md.
//
// What makes it fast (the ideas of best.cu):
// - G = 8 work-items per chain, CB = 32 chains per work-group: work-item g of a chain owns the rows
//   g, g+G, g+2G, ... of A, q, p and the force (R = ceil(d/G) rows), so K = 1024 chains at d = 32
//   still give 8192 work-items instead of 1024.
// - d is a compile-time constant where it matters: the matrix-vector product (and the load of A's
//   rows into registers) is an always-inlined function called from a switch over the 16 even d in
//   2..32 with d a literal, so it is fully unrolled and up to AREG = 72 floats of this work-item's
//   rows of A live in registers (rows beyond that budget are read from local memory); q, p and f
//   are private arrays indexed only by constants.
// - The product needs the whole q in every work-item of the chain: each writes its rows of q to the
//   chain's local-memory slot (two slots used alternately, so one barrier per leapfrog step), then
//   reads q back as float4 (the same address for the G work-items of a chain); two partial sums
//   per row for ILP. Row and slot strides are odd multiples of 4 floats (distinct banks).
// What differs from best.cu (OpenCL C 1.2: no warp shuffles, no lock-step warps):
// - The launch is block=CB,G with one chain per x index (per_thread=1): the host's grid
//   ceil(k / CB) is right for every CB and G, so there is no CB == PT * G constraint. Inside the
//   work-group the work-items are renumbered lane-fastest (lid = x + CB * y, g = lid % G,
//   chain = lid / G), so the G work-items of a chain are adjacent, as a CUDA group's lanes were.
// - __syncwarp becomes barrier(CLK_LOCAL_MEM_FENCE) over the work-group. Every barrier is reached
//   unconditionally (none inside the d switch, no early return): on PoCL 3.1 a first version with
//   barriers inside the switch, and one with a uniform early return, gave wrong results and heap
//   corruption. A d outside the contract (odd or above 32) touches no memory.
// - Box-Muller: each work-item draws both uniforms of its row pair (two hashes instead of a hash
//   and a shuffle); cos and sin of 2 pi u2 by cospi/sinpi (exact argument); accurate log and sqrt.
// - dH is summed through local memory in one fixed order, so every work-item of a chain gets the
//   bit-identical value and takes the same Metropolis decision.
// Knobs: every combination is valid (local memory 14.5 KB at the defaults, 24.5 KB at CB=64 G=8).
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture): VL = 16 chains per work-item as
// the lanes of float16 vectors (the first CB / 16 work-items of the group's row 0; the others idle,
// since the host's geometry is the GPU path's), the whole step in private memory, A read from
// memory (cached: 4 KB at d = 32) and broadcast, no local memory and no barrier. PoCL runs a
// work-group as loops over its work-items split at every barrier, and vectorises such a loop only
// when a work-item's code has no loop of its own: the GPU path's barrier per leapfrog step cost it
// L+2 passes per step (its first version timed out at the small profile), and one scalar chain per
// work-item (the previous CPU path, d a literal through the switch) ran the leapfrog loop, the
// hashes and Box-Muller's log, sqrt, cospi and sinpi one chain at a time: 0.96-2.0x the seed. With
// the chains as vector lanes every operation serves 16 chains (AVX-512 here; two halves on AVX2),
// d stays a run-time loop bound (one instance, compiled in about 4 s).
//
// Checked on PoCL 3.1 (pthread CPU device, 2 cores) with the snapshot binary (the paper and large
// lines before the float16 CPU path; that one: small profile, both paths, on PoCL 3.1 and 5.0, and a
// scratch harness against seed.cl, k in {1, 15, 17, 77, 100} x every even d, 4 steps, at CB/G =
// 32/8, 16/4 and 64/8: the same accept counts, q within 1e-4, a broken tail caught):
//   kevo eval hmc tasks/hmc/best.cl --backend opencl --profile small --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   kevo eval hmc tasks/hmc/best.cl --backend opencl --profile paper --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   kevo eval hmc tasks/hmc/best.cl --backend opencl --profile large --sizes all --check-only  -> ok, 4 sizes incl. held-out
//   all 12 combinations of G, CB, AREG at the small profile -> ok; and a scratch harness against
//   seed.cl (same inputs, 4 steps): every even d from 2 to 32 at k = 100, and every knob
//   combination at d = 2, 14, 24, 32 with k = 77: the same accept counts, q within 1.2e-6.
// Indicative PoCL times of the GPU path (PATH=gpu; paper profile, 2-core CPU, says nothing about a GPU): seed / this file
// 2.05 s / 7.70 s at d=8, 1.29 / 2.11 s at d=16, 1.26 / 1.07 s at d=32, held-out 1.34 / 1.93 s
// (work-group barriers per leapfrog step are expensive on a CPU).
//
// kevo: tune PATH auto gpu cpu
// kevo: tune G 8 4
// kevo: tune CB 32 16 64
// kevo: tune AREG 72 48
// kevo: launch hmc_step block=CB,G per_thread=1
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
#ifndef G
#define G 8
#endif
#ifndef CB
#define CB 32
#endif
#ifndef AREG
#define AREG 72
#endif
#if G != 4 && G != 8
#error "G must be 4 or 8"
#endif

#define NT (G * CB)
#define SMAX 36                   // the largest padded row stride (d = 32)
#define RMAX ((32 + G - 1) / G)   // the most rows per work-item (d = 32)
#define AR_F (AREG > 4 ? AREG : 4)

uint fmix32(uint x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

// The task's generator: key = seed + chain * 0x9E3779B9; 24-bit uniform in [0, 1), exact.
static inline float uniform01(uint key, uint counter)
{
    uint x = fmix32(key ^ counter);
    x = fmix32(x);
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

// f = A q for this work-item's rows, d = D a literal after inlining; q is read from the chain's
// slot qb (complete: the caller has passed a barrier). No barrier in here (PoCL, like any OpenCL
// compiler, handles barriers best outside the d switch).
static inline __attribute__((always_inline)) void matvec(const int D, const float* Ar, __local const float* As,
                                                         __local const float* qb, uint g, float* f)
{
    const int R = (D + G - 1) / G;                     // rows per work-item
    const int C4 = (D + 3) & ~3;                       // columns padded to a multiple of 4
    const int S = ((C4 / 4) % 2 == 1) ? C4 : C4 + 4;   // row / slot stride: odd multiple of 4
    const int RR0 = AREG / C4;
    const int RR = RR0 < R ? RR0 : R;                  // rows of A held in registers
    float acc0[RMAX], acc1[RMAX];
#pragma unroll
    for (int i = 0; i < RMAX; ++i) acc0[i] = acc1[i] = 0.0f;
#pragma unroll
    for (int c = 0; c < 32; c += 4) {
        if (c < C4) {
            const float4 qv = *(__local const float4*)(qb + c);
#pragma unroll
            for (int i = 0; i < RMAX; ++i) {
                if (i < R) {
                    float4 a;
                    if (i < RR)
                        a = (float4)(Ar[i * C4 + c], Ar[i * C4 + c + 1], Ar[i * C4 + c + 2], Ar[i * C4 + c + 3]);
                    else
                        a = *(__local const float4*)(As + (g + G * i) * S + c);
                    float s = ((c / 4) & 1) ? acc1[i] : acc0[i];
                    s = fma(a.x, qv.x, s);
                    s = fma(a.y, qv.y, s);
                    s = fma(a.z, qv.z, s);
                    s = fma(a.w, qv.w, s);
                    if ((c / 4) & 1)
                        acc1[i] = s;
                    else
                        acc0[i] = s;
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < RMAX; ++i)
        if (i < R) f[i] = acc0[i] + acc1[i];
}

// The first RR rows of this work-item's A into registers (Ar[i * C4 + c]), d = D a literal.
static inline __attribute__((always_inline)) void load_ar(const int D, float* Ar, __local const float* As, uint g)
{
    const int R = (D + G - 1) / G;
    const int C4 = (D + 3) & ~3;
    const int S = ((C4 / 4) % 2 == 1) ? C4 : C4 + 4;
    const int RR0 = AREG / C4;
    const int RR = RR0 < R ? RR0 : R;
#pragma unroll
    for (int i = 0; i < RMAX; ++i) {
        if (i < RR) {
#pragma unroll
            for (int c = 0; c < 32; ++c)
                if (c < C4) Ar[i * C4 + c] = As[(g + G * i) * S + c];
        }
    }
}

#define D_SWITCH(CALL)          \
    switch (d) {                \
    case 2: CALL(2); break;     \
    case 4: CALL(4); break;     \
    case 6: CALL(6); break;     \
    case 8: CALL(8); break;     \
    case 10: CALL(10); break;   \
    case 12: CALL(12); break;   \
    case 14: CALL(14); break;   \
    case 16: CALL(16); break;   \
    case 18: CALL(18); break;   \
    case 20: CALL(20); break;   \
    case 22: CALL(22); break;   \
    case 24: CALL(24); break;   \
    case 26: CALL(26); break;   \
    case 28: CALL(28); break;   \
    case 30: CALL(30); break;   \
    case 32: CALL(32); break;   \
    default: break;             \
    }

#if CPU_PATH
// The CPU path: the group's CB chains in CB / VL work-items of VL chains each, the chains being the
// lanes of VL-wide vectors (PoCL vectorises a loop over work-items only when a work-item's code has
// no loop of its own, and the leapfrog loop is one), so every operation of the step, the
// transcendentals of Box-Muller included, is one vector operation for VL chains.
#define VL 16
#if CB % VL != 0
#error "the CPU path needs CB to be a multiple of 16"
#endif
#define VF float16
#define VU uint16
#define VI int16
#define VLOAD vload16
#define VSTORE vstore16
#define CONVERT_VF convert_float16

static inline VU fmix32_v(VU x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

// The task's generator for VL chains at once (keys = seed + chain * 0x9E3779B9 per lane).
static inline VF uniform01_v(VU key, uint counter)
{
    return CONVERT_VF(fmix32_v(fmix32_v(key ^ counter)) >> 8) * (1.0f / 16777216.0f);
}

// f = A q for VL chains: row r of A is broadcast, q[c] holds coordinate c of every chain.
static inline void matvec_v(__global const float* restrict A, uint d, const VF* q, VF* f)
{
    for (uint r = 0; r < d; ++r) {
        VF s0 = (VF)(0.0f), s1 = (VF)(0.0f);
        for (uint c = 0; c < d; c += 2) {  // d is even
            s0 = fma((VF)(A[r * d + c]), q[c], s0);
            s1 = fma((VF)(A[r * d + c + 1]), q[c + 1], s1);
        }
        f[r] = s0 + s1;
    }
}

// One whole HMC step of the VL chains c0 .. c0+VL-1 (those below k), in private memory.
static void chains_cpu(__global const float* restrict q_in, __global float* restrict q_out, __global uint* restrict accept,
                       __global const float* restrict A, uint c0, uint k, uint d, uint L, float eps, uint step, uint seed)
{
    VF q[32], q0[32], p[32], f[32];  // coordinate i of the VL chains; the first d are used
    float lane[VL];
    for (uint i = 0; i < d; ++i) {
        for (uint j = 0; j < VL; ++j) lane[j] = c0 + j < k ? q_in[(size_t)(c0 + j) * d + i] : 0.0f;
        q[i] = q0[i] = VLOAD(0, lane);
    }
    uint kl[VL];
    for (uint j = 0; j < VL; ++j) kl[j] = seed + (c0 + j) * 0x9E3779B9u;
    const VU key = VLOAD(0, kl);
    const uint base = step * (d + 1u);
    for (uint i = 0; i < d; i += 2) {
        const VF u1 = fmax(uniform01_v(key, base + i), 1e-7f);
        const VF u2 = uniform01_v(key, base + i + 1u);
        const VF rad = sqrt(-2.0f * log(u1));
        p[i] = rad * cospi(2.0f * u2);
        p[i + 1] = rad * sinpi(2.0f * u2);
    }
    matvec_v(A, d, q, f);
    VF h = (VF)(0.0f);  // -(U_old + K_old), later + (U_new + K_new)
    for (uint i = 0; i < d; ++i) {
        h -= 0.5f * (q[i] * f[i] + p[i] * p[i]);
        p[i] = fma((VF)(-0.5f * eps), f[i], p[i]);
    }
    for (uint l = 1; l <= L; ++l) {
        for (uint i = 0; i < d; ++i) q[i] = fma((VF)(eps), p[i], q[i]);
        matvec_v(A, d, q, f);
        const VF s = (VF)(l == L ? -0.5f * eps : -eps);
        for (uint i = 0; i < d; ++i) p[i] = fma(s, f[i], p[i]);
    }
    for (uint i = 0; i < d; ++i) h += 0.5f * (q[i] * f[i] + p[i] * p[i]);
    const VF u = uniform01_v(key, base + d);
    const VI ok = isfinite(h) & isless(log(fmax(u, 1e-30f)), -h);  // -1 where accepted
    for (uint i = 0; i < d; ++i) {
        VSTORE(select(q0[i], q[i], ok), 0, lane);
        for (uint j = 0; j < VL; ++j)
            if (c0 + j < k) q_out[(size_t)(c0 + j) * d + i] = lane[j];
    }
    int okl[VL];
    VSTORE(ok, 0, okl);
    for (uint j = 0; j < VL; ++j)
        if (c0 + j < k && okl[j]) accept[c0 + j] += 1u;
}
#endif

__kernel void hmc_step(__global const float* restrict q_in, __global float* restrict q_out, __global uint* restrict accept,
                       __global const float* restrict A, uint k, uint d, uint L, float eps, uint step, uint seed)
{
#if CPU_PATH
    // The first CB / VL work-items of local row 0 take the group's CB chains, VL each; the others
    // idle (the launch geometry is the GPU path's). A d outside the contract touches no memory.
    const uint c0 = (uint)get_group_id(0) * CB + (uint)get_local_id(0) * VL;
    if (get_local_id(1) == 0 && get_local_id(0) < CB / VL && c0 < k && d >= 2u && d <= 32u && d % 2u == 0u)
        chains_cpu(q_in, q_out, accept, A, c0, k, d, L, eps, step, seed);
#else
    __local float4 As4[32 * SMAX / 4];        // A, rows padded to the stride S
    __local float4 qs4[2 * CB * SMAX / 4];    // per chain: two q slots
    __local float hs[CB * G];                 // per work-item: its share of dH
    __local float* As = (__local float*)As4;
    __local float* qs = (__local float*)qs4;
    // A d outside the task's contract (odd, or above 32) touches no memory. No early return: every
    // work-item must reach every barrier, and a return before a barrier miscompiles on PoCL 3.1.
    const bool run = d >= 2u && d <= 32u && (d & 1u) == 0u;
    const uint R = (d + G - 1) / G;                       // rows per work-item
    const uint C4 = (d + 3u) & ~3u;                       // columns padded to a multiple of 4
    const uint S = ((C4 / 4u) % 2u == 1u) ? C4 : C4 + 4u; // row / slot stride: odd multiple of 4
    const uint lid = (uint)get_local_id(0) + (uint)CB * (uint)get_local_id(1);
    const uint g = lid % G, cl = lid / G;                 // row offset, chain within the group
    const uint chain = (uint)get_group_id(0) * CB + cl;
    const bool valid = run && chain < k;

    // A into local memory, padded: rows [d, R*G) and columns [d, S) are zero.
    for (uint e = lid; e < (run ? R * G * S : 0u); e += NT) {
        const uint r = e / S, c = e - r * S;
        As[e] = (r < d && c < d) ? A[r * d + c] : 0.0f;
    }

    // Own rows r = g + G i of q (0 past d) and the momenta; Box-Muller on the pair (r & ~1, r | 1),
    // both uniforms drawn here.
    float q[RMAX], p[RMAX], f[RMAX], qo[RMAX];
    const uint key = seed + chain * 0x9E3779B9u;
    const uint base = step * (d + 1u);
#pragma unroll
    for (int i = 0; i < RMAX; ++i) {
        q[i] = p[i] = f[i] = 0.0f;
        const uint r = g + G * i;
        if (r < d) {
            if (valid) q[i] = q_in[(size_t)chain * d + r];
            const uint r0 = r & ~1u;
            const float u1 = fmax(uniform01(key, base + r0), 1e-7f);
            const float u2 = uniform01(key, base + r0 + 1u);
            const float rad = sqrt(-2.0f * log(u1));
            const float t = 2.0f * u2;
            p[i] = rad * ((r & 1u) ? sinpi(t) : cospi(t));
        }
        qo[i] = q[i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // As is complete

    float Ar[AR_F];
#define LOAD_AR(D) load_ar(D, Ar, As, g)
    D_SWITCH(LOAD_AR)

    // l = 0: the initial force; l = 1..L: the leapfrog steps. The chain's two q slots alternate,
    // so one barrier per force suffices (a slot is rewritten only after every work-item of the
    // group has passed the barrier that follows its last read).
    float h = 0.0f;  // this work-item's share of -(U_old + K_old), later + (U_new + K_new)
    for (uint l = 0; l <= L; ++l) {
        if (l > 0) {
#pragma unroll
            for (int i = 0; i < RMAX; ++i)
                if ((uint)i < R) q[i] = fma(eps, p[i], q[i]);
        }
        __local float* qb = qs + ((l & 1u) * CB + cl) * S;
#pragma unroll
        for (int i = 0; i < RMAX; ++i)
            if (run && (uint)i < R && g + G * i < C4) qb[g + G * i] = q[i];  // rows [d, C4) write 0
        barrier(CLK_LOCAL_MEM_FENCE);
#define MATVEC(D) matvec(D, Ar, As, qb, g, f)
        D_SWITCH(MATVEC)
        if (l == 0) {
#pragma unroll
            for (int i = 0; i < RMAX; ++i) {
                if ((uint)i < R) {
                    h -= 0.5f * (q[i] * f[i] + p[i] * p[i]);
                    p[i] = fma(-0.5f * eps, f[i], p[i]);
                }
            }
        } else {
            const float s = l == L ? 0.5f * eps : eps;
#pragma unroll
            for (int i = 0; i < RMAX; ++i)
                if ((uint)i < R) p[i] = fma(-s, f[i], p[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < RMAX; ++i)
        if ((uint)i < R) h += 0.5f * (q[i] * f[i] + p[i] * p[i]);

    // dH over the chain's G work-items, summed in one fixed order: identical in every one of them.
    hs[cl * G + g] = h;
    barrier(CLK_LOCAL_MEM_FENCE);
    float dh = 0.0f;
#pragma unroll
    for (int o = 0; o < G; ++o) dh += hs[cl * G + o];

    const float u = uniform01(key, base + d);
    const bool ok = isfinite(dh) && log(fmax(u, 1e-30f)) < -dh;
    if (valid) {
#pragma unroll
        for (int i = 0; i < RMAX; ++i) {
            const uint r = g + G * i;
            if (r < d) q_out[(size_t)chain * d + r] = ok ? q[i] : qo[i];
        }
        if (g == 0 && ok) accept[chain] += 1u;
    }
#endif
}
