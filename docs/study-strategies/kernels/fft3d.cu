// Study copy of tasks/fft3d/best.cu for the strategy comparison (docs/study-strategies/README.md):
// the same kernel, its knob space cut or widened to MINB x PAD x TWID x LDG x STG = points so every task's space has 48.
// fft3d best-known kernel for the H200: forward unnormalised 3-D complex FFT as three axis passes
// (x: A->B, y: B->A, z: A->B), every intermediate kept in the natural layout (k*n + j)*n + i.
//
// WHAT MADE IT FAST
// - One global read and one global write of 8 B per element per pass, nothing else: every block
//   owns a tile of 4096 elements (block 256 x per_thread 16), i.e. L = 4096/n whole lines, and does
//   the whole 1-D FFT of those lines on chip (registers + one 34 KB shared tile).
// - Line FFT in registers: each thread holds 16 elements of one line; Stockham auto-sort passes
//   (radix 16 first, then 16/8/4/2 as n needs: 256 = 16x16, 512 = 16x16x2, 128 = 16x8 ...), with
//   fully unrolled radix-16 (4x4) / 8 / 4 / 2 butterflies, one shared-memory exchange (+ barrier)
//   between passes. The first pass reads global memory directly into registers, the last pass
//   writes global memory directly from registers (the Stockham output of the last pass is in
//   natural order, so both touch elements t + r*n/R of a line).
// - Coalescing: for x (contiguous lines) consecutive threads take consecutive elements of a line;
//   for y and z (strided lines) consecutive threads take consecutive x columns of the tile, so each
//   warp access is 256 B (n <= 128), 2 x 128 B (n = 256) or 4 x 64 B (n = 512) contiguous.
// - Shared tile index p + (p >> 4) (one pad word per 16) with line pitch n + n/16 (x) or column-
//   interleaved (y, z): conflict-free for every pass of n <= 256 (verified by the pattern analysis
//   in notes-fft.md), at most 2-way at n = 512.
// - Occupancy: 64 registers (MINB 4, no spills) and 34 KB shared -> 4 blocks (32 warps) per SM, so
//   the 512 blocks of a 128^3 pass run as one wave on 132 SMs (528 slots), and every thread has 16
//   independent 8-byte loads in flight (32 KB per block), plenty to cover DRAM latency.
// - Twiddles: one sincospif per radix butterfly (exact argument k/(Ns*R), accurate to ~1 ulp), the
//   powers w^r by complex multiplication; constant W16 twiddles are literals.
// - Memory bound: 3 passes x 16 B per element; at 128^3 the 16.8 MB buffers sit in the L2.
//   Measured on the H200 (large profile): 1.14x cuFFT at 128^3, 1.12x at 256^3, 1.02x at 512^3,
//   1.21x at 64^3 (held-out); 0.71-0.87 of the measured 4333 GB/s static ceiling at 128^3..512^3
//   (0.865 at 256^3, 0.834 at 512^3, as estimated).
// n = 8 and n = 16: one thread per line in registers (no shared memory); n < 8: naive DFT.
// The kernels assume blockDim.x == 256 and 4096 elements per block (the launch directives below).
//
// kevo: tune MINB 4 3 2
// kevo: tune PAD 1 0
// kevo: tune TWID 0 1
// kevo: tune LDG 1 0
// kevo: tune STG 0 1
// kevo: launch fft3d_x block=256 per_thread=16
// kevo: launch fft3d_y block=256 per_thread=16
// kevo: launch fft3d_z block=256 per_thread=16
#ifndef MINB
#define MINB 4
#endif
// Study knobs (defaults = the best-known kernel): PAD 0 drops the shared tile's pad word (bank
// conflicts), TWID 1 takes the twiddles from the fast __sincosf, LDG 0 loads without the read-only
// path, STG 1 writes with streaming (evict-first) stores.
#ifndef PAD
#define PAD 1
#endif
#ifndef TWID
#define TWID 0
#endif
#ifndef LDG
#define LDG 1
#endif
#ifndef STG
#define STG 0
#endif
#if LDG
#define FFT_LOAD(p) __ldg(p)
#else
#define FFT_LOAD(p) (*(p))
#endif
#if STG
#define FFT_STORE(p, v) __stcs((p), (v))
#else
#define FFT_STORE(p, v) (*(p) = (v))
#endif

#define FFT_TILE 4096            // elements per block: block 256 x per_thread 16
#define FFT_SMEM (4096 + 256)    // float2 words of the shared tile: n + n/16 words per line

#define K_C1 0.92387953251128674f  // cos(pi/8)
#define K_S1 0.38268343236508978f  // sin(pi/8)
#define K_R2 0.70710678118654752f  // sqrt(1/2)

__device__ __forceinline__ float2 cadd(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 csub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ float2 cmul_mi(float2 a) { return make_float2(a.y, -a.x); }  // a * (-i)

// Natural-order DFTs in registers: v[k] <- sum_r v[r] exp(-2 pi i r k / R).
__device__ __forceinline__ void dft2(float2& a, float2& b)
{
    const float2 t = a;
    a = cadd(t, b);
    b = csub(t, b);
}

__device__ __forceinline__ void dft4(float2& a0, float2& a1, float2& a2, float2& a3)
{
    const float2 t0 = cadd(a0, a2), t1 = csub(a0, a2), t2 = cadd(a1, a3), t3 = cmul_mi(csub(a1, a3));
    a0 = cadd(t0, t2);
    a2 = csub(t0, t2);
    a1 = cadd(t1, t3);
    a3 = csub(t1, t3);
}

// 8 = 4 x 2: r = 2a + b, k = c + 4d.
__device__ __forceinline__ void dft8(float2* v)
{
    dft4(v[0], v[2], v[4], v[6]);
    dft4(v[1], v[3], v[5], v[7]);
    v[3] = cmul(v[3], make_float2(K_R2, -K_R2));
    v[5] = cmul_mi(v[5]);
    v[7] = cmul(v[7], make_float2(-K_R2, -K_R2));
    float2 o[8];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        o[c] = cadd(v[2 * c], v[2 * c + 1]);
        o[c + 4] = csub(v[2 * c], v[2 * c + 1]);
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = o[k];
}

// 16 = 4 x 4: r = 4a + b, k = c + 4d; X[c + 4d] = sum_b W4^{bd} W16^{bc} sum_a v[4a + b] W4^{ac}.
__device__ __forceinline__ void dft16(float2* v)
{
#pragma unroll
    for (int b = 0; b < 4; ++b) dft4(v[b], v[4 + b], v[8 + b], v[12 + b]);  // y[b][c] at v[4c + b]
    v[5] = cmul(v[5], make_float2(K_C1, -K_S1));    // b1 c1: W16^1
    v[9] = cmul(v[9], make_float2(K_R2, -K_R2));    // b1 c2: W16^2
    v[13] = cmul(v[13], make_float2(K_S1, -K_C1));  // b1 c3: W16^3
    v[6] = cmul(v[6], make_float2(K_R2, -K_R2));    // b2 c1: W16^2
    v[10] = cmul_mi(v[10]);                         // b2 c2: W16^4
    v[14] = cmul(v[14], make_float2(-K_R2, -K_R2)); // b2 c3: W16^6
    v[7] = cmul(v[7], make_float2(K_S1, -K_C1));    // b3 c1: W16^3
    v[11] = cmul(v[11], make_float2(-K_R2, -K_R2)); // b3 c2: W16^6
    v[15] = cmul(v[15], make_float2(-K_C1, K_S1));  // b3 c3: W16^9
    float2 o[16];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        float2 a0 = v[4 * c], a1 = v[4 * c + 1], a2 = v[4 * c + 2], a3 = v[4 * c + 3];
        dft4(a0, a1, a2, a3);
        o[c] = a0;
        o[c + 4] = a1;
        o[c + 8] = a2;
        o[c + 12] = a3;
    }
#pragma unroll
    for (int k = 0; k < 16; ++k) v[k] = o[k];
}

template <int R> __device__ __forceinline__ void dftR(float2* v)
{
    if (R == 2) dft2(v[0], v[1]);
    else if (R == 4) dft4(v[0], v[1], v[2], v[3]);
    else if (R == 8) dft8(v);
    else dft16(v);
}

// Shared-tile word of element p of tile line c. x: line-major with pitch n + n/16; y, z: element-
// major, lines (x columns) interleaved. p + (p >> 4) breaks the stride-16 pattern of the first
// Stockham pass's writes.
template <int N, int AXIS> __device__ __forceinline__ unsigned sidx(unsigned c, unsigned p)
{
    const unsigned q = PAD ? p + (p >> 4) : p;
    return AXIS == 0 ? c * (unsigned)(N + N / 16) + q : q * (unsigned)(FFT_TILE / N) + c;
}

// One Stockham pass of radix R after the first (Ns = product of the radices before it). Each
// thread does 16/R butterflies j = t + m*T. The last pass (Ns * R == N) writes global memory.
template <int N, int AXIS, int R, int NS>
__device__ __forceinline__ void stockham_pass(float2* v, float2* sm, unsigned t, unsigned c, float2* __restrict__ out,
                                              unsigned base, unsigned stride)
{
    constexpr int T = N / 16, M = 16 / R;
    constexpr bool last = NS * R == N;
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int r = 0; r < R; ++r) v[m * R + r] = sm[sidx<N, AXIS>(c, t + m * T + r * (N / R))];
    if (!last) __syncthreads();  // every read of the tile is done before it is overwritten
#pragma unroll
    for (int m = 0; m < M; ++m) {
        const unsigned j = t + m * T, k = j % NS;
        float s, co;
        if (TWID) __sincosf((float)k * (-6.283185307179586f / (float)(NS * R)), &s, &co);
        else sincospif((float)k * (-2.0f / (float)(NS * R)), &s, &co);  // exp(-2 pi i k / (Ns R))
        const float2 w = make_float2(co, s);
        float2 wr = w;
#pragma unroll
        for (int r = 1; r < R; ++r) {
            v[m * R + r] = cmul(v[m * R + r], wr);
            if (r + 1 < R) wr = cmul(wr, w);
        }
        dftR<R>(v + m * R);
        if (last) {
#pragma unroll
            for (int r = 0; r < R; ++r) FFT_STORE(out + base + (j + r * NS) * stride, v[m * R + r]);
        } else {
            const unsigned d = (j / NS) * NS * R + k;
#pragma unroll
            for (int r = 0; r < R; ++r) sm[sidx<N, AXIS>(c, d + r * NS)] = v[m * R + r];
        }
    }
    if (!last) __syncthreads();
}

// n >= 32: a block of 256 threads owns L = 4096/n lines, T = n/16 threads per line.
template <int N, int AXIS>
__device__ __forceinline__ void fft_tile(const float2* __restrict__ in, float2* __restrict__ out, float2* sm)
{
    constexpr unsigned T = N / 16, L = FFT_TILE / N;
    if (blockIdx.x >= (unsigned)N * N / L) return;  // whole block past the last line (uniform)
    const unsigned tid = threadIdx.x;
    // x: threads of a line adjacent (contiguous line); y, z: lines adjacent (adjacent x columns).
    const unsigned t = AXIS == 0 ? tid % T : tid / L;
    const unsigned c = AXIS == 0 ? tid / T : tid % L;
    const unsigned g = blockIdx.x * L + c;  // global line index
    unsigned base, stride;
    if (AXIS == 0) {
        base = g * N;
        stride = 1;
    } else if (AXIS == 1) {
        base = (g / N) * N * N + g % N;
        stride = N;
    } else {
        base = g;
        stride = N * N;
    }
    float2 v[16];
    // First pass: radix 16, Ns = 1 (no twiddles), straight from global memory.
#pragma unroll
    for (int r = 0; r < 16; ++r) v[r] = FFT_LOAD(in + base + (t + r * T) * stride);
    dft16(v);
#pragma unroll
    for (int r = 0; r < 16; ++r) sm[sidx<N, AXIS>(c, 16 * t + r)] = v[r];
    __syncthreads();
    if (N == 32) stockham_pass<N, AXIS, 2, 16>(v, sm, t, c, out, base, stride);
    else if (N == 64) stockham_pass<N, AXIS, 4, 16>(v, sm, t, c, out, base, stride);
    else if (N == 128) stockham_pass<N, AXIS, 8, 16>(v, sm, t, c, out, base, stride);
    else if (N == 256) stockham_pass<N, AXIS, 16, 16>(v, sm, t, c, out, base, stride);
    else if (N == 512) {
        stockham_pass<N, AXIS, 16, 16>(v, sm, t, c, out, base, stride);
        stockham_pass<N, AXIS, 2, 256>(v, sm, t, c, out, base, stride);
    } else if (N == 1024) {
        stockham_pass<N, AXIS, 16, 16>(v, sm, t, c, out, base, stride);
        stockham_pass<N, AXIS, 4, 256>(v, sm, t, c, out, base, stride);
    }
}

// Line g's first element and stride along AXIS for a cube of side n.
template <int AXIS> __device__ __forceinline__ void line_of(unsigned g, unsigned n, unsigned& base, unsigned& stride)
{
    if (AXIS == 0) {
        base = g * n;
        stride = 1;
    } else if (AXIS == 1) {
        base = (g / n) * n * n + g % n;
        stride = n;
    } else {
        base = g;
        stride = n * n;
    }
}

// n = 8 or 16: one thread per line, whole line in registers.
template <int N, int AXIS> __device__ __forceinline__ void fft_small(const float2* __restrict__ in, float2* __restrict__ out)
{
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= (unsigned)(N * N)) return;
    unsigned base, stride;
    line_of<AXIS>(g, N, base, stride);
    float2 v[N];
    if (AXIS == 0) {  // 16-byte aligned contiguous line: float4 loads
        const float4* p = reinterpret_cast<const float4*>(in + base);
#pragma unroll
        for (int q = 0; q < N / 2; ++q) {
            const float4 f = __ldg(p + q);
            v[2 * q] = make_float2(f.x, f.y);
            v[2 * q + 1] = make_float2(f.z, f.w);
        }
    } else {
#pragma unroll
        for (int r = 0; r < N; ++r) v[r] = __ldg(in + base + r * stride);
    }
    dftR<N>(v);
    if (AXIS == 0) {
        float4* p = reinterpret_cast<float4*>(out + base);
#pragma unroll
        for (int q = 0; q < N / 2; ++q) p[q] = make_float4(v[2 * q].x, v[2 * q].y, v[2 * q + 1].x, v[2 * q + 1].y);
    } else {
#pragma unroll
        for (int r = 0; r < N; ++r) out[base + r * stride] = v[r];
    }
}

// n < 8 (not in any profile): naive DFT, one thread per line.
template <int AXIS> __device__ void fft_naive(const float2* __restrict__ in, float2* __restrict__ out, unsigned n)
{
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n * n) return;
    unsigned base, stride;
    line_of<AXIS>(g, n, base, stride);
    for (unsigned k = 0; k < n; ++k) {
        float2 acc = make_float2(0.0f, 0.0f);
        for (unsigned e = 0; e < n; ++e) {
            float s, co;
            sincospif(-2.0f * (float)((e * k) % n) / (float)n, &s, &co);
            acc = cadd(acc, cmul(in[base + e * stride], make_float2(co, s)));
        }
        out[base + k * stride] = acc;
    }
}

template <int AXIS> __device__ __forceinline__ void fft_dispatch(const float2* __restrict__ in, float2* __restrict__ out, unsigned n)
{
    __shared__ float2 sm[FFT_SMEM];
    switch (n) {
    case 8: fft_small<8, AXIS>(in, out); break;
    case 16: fft_small<16, AXIS>(in, out); break;
    case 32: fft_tile<32, AXIS>(in, out, sm); break;
    case 64: fft_tile<64, AXIS>(in, out, sm); break;
    case 128: fft_tile<128, AXIS>(in, out, sm); break;
    case 256: fft_tile<256, AXIS>(in, out, sm); break;
    case 512: fft_tile<512, AXIS>(in, out, sm); break;
    case 1024: fft_tile<1024, AXIS>(in, out, sm); break;
    default:
        if (n < 8) fft_naive<AXIS>(in, out, n);
        break;
    }
}

extern "C" __global__ void __launch_bounds__(256, MINB) fft3d_x(const float2* __restrict__ in, float2* __restrict__ out, unsigned n)
{
    fft_dispatch<0>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(256, MINB) fft3d_y(const float2* __restrict__ in, float2* __restrict__ out, unsigned n)
{
    fft_dispatch<1>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(256, MINB) fft3d_z(const float2* __restrict__ in, float2* __restrict__ out, unsigned n)
{
    fft_dispatch<2>(in, out, n);
}
