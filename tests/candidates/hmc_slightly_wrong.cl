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

uint fmix32(uint x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

// Uniform in [0, 1) with 24 bits: the task's exact generator.
float uniform01(uint seed, uint chain, uint counter)
{
    uint x = seed + chain * 0x9E3779B9u;
    x = fmix32(x ^ counter);
    x = fmix32(x);
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

void matvec(__global const float* A, const float* q, float* f, uint d)
{
    for (uint r = 0; r < d; ++r) {
        float s = 0.0f;
        for (uint c = 0; c < d; ++c) s += A[r * d + c] * q[c];
        f[r] = s;
    }
}

__kernel void hmc_step(__global const float* q_in, __global float* q_out, __global uint* accept, __global const float* A, uint k, uint d, uint L, float eps, uint step, uint seed)
{
    const uint chain = (uint)get_global_id(0);
    if (chain >= k) return;  // the global size is rounded up to whole work-groups
    float q[MAX_D], p[MAX_D], f[MAX_D];
    __global const float* qc = q_in + (size_t)chain * d;
    for (uint i = 0; i < d; ++i) q[i] = qc[i];

    // Momentum by Box-Muller from counters base+i, base+i+1.
    const uint base = step * (d + 1);
    for (uint i = 0; i < d; i += 2) {
        const float u1 = fmax(uniform01(seed, chain, base + i), 1e-7f);
        const float u2 = uniform01(seed, chain, base + i + 1);
        const float r = sqrt(-2.0f * log(u1)), th = 6.283185307179586f * u2;
        p[i] = r * cos(th);
        p[i + 1] = r * sin(th);
    }

    matvec(A, q, f, d);
    float h_old = 0.0f;
    for (uint i = 0; i < d; ++i) h_old += 0.5f * (q[i] * f[i] + p[i] * p[i]);

    for (uint i = 0; i < d; ++i) p[i] -= 0.5f * eps * f[i];
    for (uint l = 1; l <= L; ++l) {
        for (uint i = 0; i < d; ++i) q[i] += eps * p[i];
        matvec(A, q, f, d);
        const float s = l == L ? 0.5f * eps : eps;
        for (uint i = 0; i < d; ++i) p[i] -= s * f[i];
    }
    float h_new = 0.0f;
    for (uint i = 0; i < d; ++i) h_new += 0.5f * (q[i] * f[i] + p[i] * p[i]);
    const float dh = h_new - h_old;

    const float u = uniform01(seed, chain, base + d);
    // WRONG: every 16th chain never accepts
    const int ok = chain % 16u != 15u && isfinite(dh) && log(fmax(u, 1e-30f)) < -dh;
    __global float* out = q_out + (size_t)chain * d;
    for (uint i = 0; i < d; ++i) out[i] = ok ? q[i] : qc[i];
    if (ok) accept[chain] += 1u;
}
