// Fault kernel for the gate tests (tests/test_run_gate.cpp): nbody_lanes8.cl with a staggered
// start j = (i0 + t) & (n - 1), a "fast modulo" that is right only when n is a power of two. The
// small profile's in-distribution sizes (128, 256, 512) are powers of two and its held-out size (384)
// is not: the kernel is correct and about 6x faster than the seed during the search (PoCL, 2 cores)
// and wrong at the held-out size, where some bodies are summed twice and others not at all. Every
// access stays in bounds. The gate must reject it.
// kevo: launch nbody_step block=8 per_thread=8
__kernel void nbody_step(__global const float4* pos_in, __global float4* pos_out, __global const float4* vel_in, __global float4* vel_out, __global const float* mass, uint n, float dt, float eps, float G)
{
    const uint i0 = (uint)get_global_id(0) * 8u;
    if (i0 >= n) return;
    float px[8], py[8], pz[8];
    for (int k = 0; k < 8; ++k) {
        const uint i = min(i0 + (uint)k, n - 1u);
        const float4 p = pos_in[i];
        px[k] = p.x; py[k] = p.y; pz[k] = p.z;
    }
    const float8 x = vload8(0, px), y = vload8(0, py), z = vload8(0, pz);
    const float8 eps2 = (float8)(eps * eps);
    float8 ax = (float8)(0.0f), ay = (float8)(0.0f), az = (float8)(0.0f);
    for (uint t = 0; t < n; ++t) {
        // Staggered start, so that neighbouring work-items do not read the same record at once.
        // THE FAULT: the wrap is a mask, which is j mod n only when n is a power of two.
        const uint j = (i0 + t) & (n - 1u);
        const float4 q = pos_in[j];
        const float m = mass[j];
        const float8 dx = q.x - x, dy = q.y - y, dz = q.z - z;
        const float8 r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps2)));
        const float8 inv = rsqrt(r2);
        const float8 s = m * (inv * inv * inv);
        ax = fma(s, dx, ax);
        ay = fma(s, dy, ay);
        az = fma(s, dz, az);
    }
    float tx[8], ty[8], tz[8];
    vstore8(ax, 0, tx); vstore8(ay, 0, ty); vstore8(az, 0, tz);
    for (int k = 0; k < 8; ++k) {
        const uint i = i0 + (uint)k;
        if (i >= n) break;
        const float4 p = pos_in[i];
        float4 v = vel_in[i];
        v.x += G * tx[k] * dt;
        v.y += G * ty[k] * dt;
        v.z += G * tz[k] * dt;
        vel_out[i] = v;
        pos_out[i] = (float4)(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);
    }
}
