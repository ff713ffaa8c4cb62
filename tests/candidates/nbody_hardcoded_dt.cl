// FAULT: ignores the dt parameter and uses the nominal 1e-3f (right in the nominal trial, wrong in the outlier one).
__kernel void nbody_step(__global const float4* pos_in, __global float4* pos_out, __global const float4* vel_in, __global float4* vel_out, __global const float* mass, uint n, float dt, float eps, float G) {
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;
    const float step = 1e-3f;
    const float4 p = pos_in[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (uint j = 0; j < n; ++j) {
        const float4 q = pos_in[j];
        const float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        const float r2 = dx * dx + dy * dy + dz * dz + eps * eps;
        const float s = mass[j] / (r2 * sqrt(r2));
        ax += s * dx;
        ay += s * dy;
        az += s * dz;
    }
    float4 v = vel_in[i];
    v.x += G * ax * step;
    v.y += G * ay * step;
    v.z += G * az * step;
    vel_out[i] = v;
    pos_out[i] = (float4)(p.x + v.x * step, p.y + v.y * step, p.z + v.z * step, p.w);
}
