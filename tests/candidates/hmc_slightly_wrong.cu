// hmc_slightly_wrong: every 16th chain (chain % 16 == 15) is frozen: it rejects every proposal and
// keeps its start, as a chain index mix-up in a packed kernel would leave one lane of 16 idle. The
// other 15 follow the reference exactly, and the moments stay inside the statistical checks (the
// frozen chains hold their N(0, 4 Sigma) start).
// kevo: tune BLOCK 64 32 128 256
// kevo: launch hmc_step block=BLOCK
#ifndef BLOCK
#define BLOCK 64
#endif
#define MAX_D 32

__device__ unsigned fmix32(unsigned x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

// Uniform in [0, 1) with 24 bits: the task's exact generator.
__device__ float uniform01(unsigned seed, unsigned chain, unsigned counter)
{
    unsigned x = seed + chain * 0x9E3779B9u;
    x = fmix32(x ^ counter);
    x = fmix32(x);
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

__device__ void matvec(const float* A, const float* q, float* f, unsigned d)
{
    for (unsigned r = 0; r < d; ++r) {
        float s = 0.0f;
        for (unsigned c = 0; c < d; ++c) s += A[r * d + c] * q[c];
        f[r] = s;
    }
}

extern "C" __global__ void hmc_step(const float* q_in, float* q_out, unsigned* accept, const float* A, unsigned k, unsigned d, unsigned L, float eps, unsigned step, unsigned seed)
{
    const unsigned chain = blockIdx.x * blockDim.x + threadIdx.x;
    if (chain >= k) return;  // the grid is rounded up to whole blocks
    float q[MAX_D], p[MAX_D], f[MAX_D];
    const float* qc = q_in + (size_t)chain * d;
    for (unsigned i = 0; i < d; ++i) q[i] = qc[i];

    // Momentum by Box-Muller from counters base+i, base+i+1.
    const unsigned base = step * (d + 1);
    for (unsigned i = 0; i < d; i += 2) {
        const float u1 = fmaxf(uniform01(seed, chain, base + i), 1e-7f);
        const float u2 = uniform01(seed, chain, base + i + 1);
        const float r = sqrtf(-2.0f * logf(u1)), th = 6.283185307179586f * u2;
        p[i] = r * cosf(th);
        p[i + 1] = r * sinf(th);
    }

    matvec(A, q, f, d);
    float h_old = 0.0f;
    for (unsigned i = 0; i < d; ++i) h_old += 0.5f * (q[i] * f[i] + p[i] * p[i]);

    for (unsigned i = 0; i < d; ++i) p[i] -= 0.5f * eps * f[i];
    for (unsigned l = 1; l <= L; ++l) {
        for (unsigned i = 0; i < d; ++i) q[i] += eps * p[i];
        matvec(A, q, f, d);
        const float s = l == L ? 0.5f * eps : eps;
        for (unsigned i = 0; i < d; ++i) p[i] -= s * f[i];
    }
    float h_new = 0.0f;
    for (unsigned i = 0; i < d; ++i) h_new += 0.5f * (q[i] * f[i] + p[i] * p[i]);
    const float dh = h_new - h_old;

    const float u = uniform01(seed, chain, base + d);
    // WRONG: every 16th chain never accepts
    const bool ok = chain % 16u != 15u && isfinite(dh) && logf(fmaxf(u, 1e-30f)) < -dh;
    float* out = q_out + (size_t)chain * d;
    for (unsigned i = 0; i < d; ++i) out[i] = ok ? q[i] : qc[i];
    if (ok) accept[chain] += 1u;
}
