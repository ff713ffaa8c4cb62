// Study copy of tasks/hmc/best.cu for the strategy comparison (docs/study-strategies/README.md):
// the same kernel, its knob space widened to G x PT x AREG = 2 x 4 x 6 = 48 points (CB = PT x G chains per
// block follows from two knobs, so every point of the space can launch).
// hmc best-known kernel for the H200 (sm_90): one HMC step (Box-Muller momenta, L leapfrog steps,
// Metropolis test) for K independent chains per launch.
//
// What made it fast:
// - A group of G = 8 lanes works on one chain (block G x CB, CB = 32 chains per block): one thread
//   per chain would give only K = 4096 threads (1 warp per SM) at d = 32. Lane g owns the rows
//   g, g+G, g+2G, ... of A, q, p and the force (R = ceil(d/G) rows), so d = 16..32 all spread over
//   the 8 lanes with at most one padded row (d = 20: 24 rows).
// - d is a compile-time constant: the kernel switches over the 16 even d in 2..32 into a template,
//   so q, p, f and the rows of A live in registers and every loop is unrolled. A's rows sit in
//   registers (up to AREG = 72 floats per lane; d = 32 keeps 2 of its 4 rows in registers and
//   reads the other 2 from shared memory), which keeps the kernel under 128 registers (2 blocks
//   of 256 threads per SM).
// - The matrix-vector product needs the whole q in every lane of the group: each lane writes its
//   rows of q to a per-chain shared-memory slot (double-buffered, so one __syncwarp per leapfrog
//   step), then reads q back 4 floats at a time (LDS.128, broadcast to the group); a lane does
//   R * d FFMA per product with two partial sums per row for ILP. Row and slot strides are odd
//   multiples of 4 floats, so the 8 rows read by a group and the 4 chains of a warp fall in
//   distinct banks (conflict-free LDS.128).
// - Box-Muller pairs rows (r, r^1), owned by lanes (g, g^1): each lane draws the uniform of its own
//   row and gets its partner's by one __shfl_xor_sync; dH is reduced over the group by 3 xor
//   shuffles (identical in every lane, so the group agrees on the Metropolis decision).
// Limits: a launch is only ~90-100 MFLOP (~1.5 us at peak); per leapfrog step and lane: R*d FFMA +
// d/4 LDS.128 + R STS + 2R FFMA + 1 __syncwarp.
// Measured on the H200 (large profile, fraction of the measured 65.6 TFLOP/s FP32 static
// ceiling): 0.154-0.193 (held-out 20x8192x200: 0.154); 7-9 us per launch, ~1 us of it the launch
// gap, far from the ~75-85% FFMA issue efficiency once estimated for the leapfrog. Not profiled;
// the likely limit is latency: 11 dependent matrix-vector products per chain, each followed by the
// q exchange and a __syncwarp, which 8-31 warps per SM do not hide.
//
// kevo: tune G 8 4
// kevo: tune PT 4 2 8 16
// kevo: tune AREG 72 64 56 48 32 0
// kevo: launch hmc_step block=G,PT*G per_thread=PT
#ifndef G
#define G 8
#endif
#ifndef PT
#define PT 4
#endif
#ifndef AREG
#define AREG 72
#endif
// Chains per block: the launch's block is G x (PT * G) and the host grid ceil(k / PT / G) blocks.
#define CB (PT * G)
#if G != 4 && G != 8
#error "G must be 4 or 8"
#endif

#define NT (G * CB)
#define SMAX 36  // the largest padded row stride (d = 32)
#define FULL 0xffffffffu

__device__ __forceinline__ unsigned fmix32(unsigned x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

// The task's generator: key = seed + chain * 0x9E3779B9; 24-bit uniform in [0, 1), exact.
__device__ __forceinline__ float uniform01(unsigned key, unsigned counter)
{
    unsigned x = fmix32(key ^ counter);
    x = fmix32(x);
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

// One chain per group of G lanes, d = D at compile time.
template <int D>
__device__ __forceinline__ void hmc_chain(const float* q_in, float* q_out, unsigned* accept, const float* A,
                                          unsigned k, unsigned L, float eps, unsigned step, unsigned seed,
                                          float* As, float* qs)
{
    constexpr int R = (D + G - 1) / G;                     // rows per lane
    constexpr int C4 = (D + 3) & ~3;                       // columns padded to a multiple of 4
    constexpr int S = ((C4 / 4) % 2 == 1) ? C4 : C4 + 4;   // row / slot stride: odd multiple of 4
    constexpr int RR0 = AREG / C4;
    constexpr int RR = RR0 < R ? RR0 : R;                  // rows of A held in registers

    const unsigned g = threadIdx.x, ty = threadIdx.y, tid = ty * G + g;
    const unsigned chain = blockIdx.x * CB + ty;
    const bool valid = chain < k;

    // A into shared memory, padded: rows [D, R*G) and columns [D, S) are zero.
    for (unsigned e = tid; e < (unsigned)(R * G * S); e += NT) {
        const unsigned r = e / S, c = e - r * S;
        As[e] = (r < D && c < D) ? __ldg(A + r * D + c) : 0.0f;
    }

    float q[R], p[R], f[R], qo[R];
    const unsigned key = seed + chain * 0x9E3779B9u;
    const unsigned base = step * (D + 1);
    const bool even = (g & 1u) == 0u;  // row g + G*i has the parity of g (G is even)
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const unsigned r = g + G * i;
        q[i] = (valid && r < D) ? __ldg(q_in + (size_t)chain * D + r) : 0.0f;
        qo[i] = q[i];
        // Box-Muller on the pair (r & ~1, r | 1); the partner row belongs to lane g ^ 1.
        const float um = uniform01(key, base + r);
        const float uo = __shfl_xor_sync(FULL, um, 1, G);
        const float u1 = fmaxf(even ? um : uo, 1e-7f), u2 = even ? uo : um;
        const float rad = sqrtf(-2.0f * logf(u1));
        float sn, cs;
        sincospif(2.0f * u2, &sn, &cs);  // sin and cos of 2 pi u2
        p[i] = r < D ? rad * (even ? cs : sn) : 0.0f;
    }
    __syncthreads();  // As is complete

    float Ar[RR > 0 ? RR : 1][C4];
#pragma unroll
    for (int i = 0; i < RR; ++i)
#pragma unroll
        for (int c = 0; c < C4; ++c) Ar[i][c] = As[(g + G * i) * S + c];

    // f = A q, with q taken from the chain's slot in buffer b.
    auto force = [&](int b) {
        const float* qb = qs + (b * CB + ty) * S;
#pragma unroll
        for (int i = 0; i < R; ++i)
            if (g + G * i < C4) qs[(b * CB + ty) * S + g + G * i] = q[i];  // rows [D, C4) write 0
        __syncwarp();
        float acc[R][2];
#pragma unroll
        for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = 0.0f;
#pragma unroll
        for (int c = 0; c < C4; c += 4) {
            const float4 qv = *reinterpret_cast<const float4*>(qb + c);
            const int h = (c / 4) & 1;
#pragma unroll
            for (int i = 0; i < R; ++i) {
                float4 a;
                if (i < RR) {
                    a = make_float4(Ar[i][c], Ar[i][c + 1], Ar[i][c + 2], Ar[i][c + 3]);
                } else {
                    a = *reinterpret_cast<const float4*>(As + (g + G * i) * S + c);
                }
                float s = acc[i][h];
                s = fmaf(a.x, qv.x, s);
                s = fmaf(a.y, qv.y, s);
                s = fmaf(a.z, qv.z, s);
                s = fmaf(a.w, qv.w, s);
                acc[i][h] = s;
            }
        }
#pragma unroll
        for (int i = 0; i < R; ++i) f[i] = acc[i][0] + acc[i][1];
    };

    force(0);
    float h = 0.0f;  // this lane's share of -(U_old + K_old), later + (U_new + K_new)
#pragma unroll
    for (int i = 0; i < R; ++i) {
        h -= 0.5f * (q[i] * f[i] + p[i] * p[i]);
        p[i] = fmaf(-0.5f * eps, f[i], p[i]);
    }
    for (unsigned l = 1; l <= L; ++l) {
#pragma unroll
        for (int i = 0; i < R; ++i) q[i] = fmaf(eps, p[i], q[i]);
        force((int)(l & 1u));  // buffers alternate, so one __syncwarp per step suffices
        const float s = l == L ? 0.5f * eps : eps;
#pragma unroll
        for (int i = 0; i < R; ++i) p[i] = fmaf(-s, f[i], p[i]);
    }
#pragma unroll
    for (int i = 0; i < R; ++i) h += 0.5f * (q[i] * f[i] + p[i] * p[i]);
#pragma unroll
    for (int o = 1; o < G; o <<= 1) h += __shfl_xor_sync(FULL, h, o, G);  // dH, the same in every lane

    const float u = uniform01(key, base + D);
    const bool ok = isfinite(h) && logf(fmaxf(u, 1e-30f)) < -h;
    if (valid) {
#pragma unroll
        for (int i = 0; i < R; ++i) {
            const unsigned r = g + G * i;
            if (r < D) q_out[(size_t)chain * D + r] = ok ? q[i] : qo[i];
        }
        if (g == 0 && ok) accept[chain] += 1u;
    }
}

extern "C" __global__ void __launch_bounds__(NT, NT < 512 ? 512 / NT : 1) hmc_step(const float* q_in, float* q_out, unsigned* accept, const float* A, unsigned k, unsigned d, unsigned L, float eps, unsigned step, unsigned seed)
{
    __shared__ __align__(16) float As[32 * SMAX];        // A, rows padded to the stride S
    __shared__ __align__(16) float qs[2 * CB * SMAX];    // per chain: two q slots
    switch (d) {
    case 2: hmc_chain<2>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 4: hmc_chain<4>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 6: hmc_chain<6>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 8: hmc_chain<8>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 10: hmc_chain<10>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 12: hmc_chain<12>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 14: hmc_chain<14>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 16: hmc_chain<16>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 18: hmc_chain<18>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 20: hmc_chain<20>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 22: hmc_chain<22>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 24: hmc_chain<24>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 26: hmc_chain<26>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 28: hmc_chain<28>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 30: hmc_chain<30>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    case 32: hmc_chain<32>(q_in, q_out, accept, A, k, L, eps, step, seed, As, qs); break;
    default: break;  // the task's d is even and at most 32
    }
}
