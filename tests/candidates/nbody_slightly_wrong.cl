// nbody_slightly_wrong: the drift uses the velocity from before the kick, r' = r + v dt (explicit
// Euler), where the task's semi-implicit step is v' = v + a dt, r' = r + v' dt. Each step moves a
// body by a dt^2 less than it should: within the first-draft 1e-3 + 1e-3 max|ref| at n = 128.
// kevo: tune BLOCK 128 64 256 512
// kevo: launch nbody_step block=BLOCK
#ifndef BLOCK
#define BLOCK 128
#endif

__kernel void nbody_step(__global const float4* pos_in, __global float4* pos_out, __global const float4* vel_in, __global float4* vel_out, __global const float* mass, uint n, float dt, float eps, float G)
{
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;  // the global size is rounded up to whole work-groups
    const float4 p = pos_in[i];
    const float eps2 = eps * eps;
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (uint j = 0; j < n; ++j) {
        const float4 q = pos_in[j];
        const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        const float r2 = dx * dx + dy * dy + dz * dz + eps2;  // j == i adds nothing: dx = dy = dz = 0
        const float s = mass[j] / (r2 * sqrt(r2));
        ax += s * dx;
        ay += s * dy;
        az += s * dz;
    }
    float4 v = vel_in[i];
    const float4 v_old = v;
    v.x += G * ax * dt;
    v.y += G * ay * dt;
    v.z += G * az * dt;
    vel_out[i] = v;
    pos_out[i] = (float4)(p.x + v_old.x * dt, p.y + v_old.y * dt, p.z + v_old.z * dt, p.w);  // WRONG: old v
}
