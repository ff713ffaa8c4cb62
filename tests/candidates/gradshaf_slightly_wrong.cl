// gradshaf_slightly_wrong: the current density uses p_axis * 1.001 (a constant 0.1% off, as a
// rounded literal folded into the source term would be).
// kevo: tune RB 256 128 512 1024
// kevo: launch gradshaf_axis_reduce block=RB grid=1
// kevo: tune BX 16 32 64 128
// kevo: tune BY 16 8 4 2 1
// kevo: launch gradshaf_step block=BX,BY
#ifndef RB
#define RB 256
#endif
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

// psi_axis[0] = max of psi over the interior (0 < i < nr-1, 0 < j < nz-1). RB must be a power of two.
__kernel void gradshaf_axis_reduce(__global const float* psi, __global float* psi_axis, uint nr, uint nz)
{
    __local float partial[RB];
    const uint t = (uint)get_local_id(0);
    const uint threads = (uint)get_local_size(0);
    const uint inner_r = nr - 2, count = (nr - 2) * (nz - 2);
    float m = -INFINITY;
    for (uint k = t; k < count; k += threads) {
        const uint i = 1 + k % inner_r, j = 1 + k / inner_r;
        m = fmax(m, psi[(size_t)j * nr + i]);
    }
    partial[t] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = threads / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] = fmax(partial[t], partial[t + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) psi_axis[0] = partial[0];
}

__kernel void gradshaf_step(__global const float* psi_in, __global float* psi_out, __global const float* psi_axis, uint nr, uint nz, float rmin, float dr, float dz, float p_axis, float mu0, float omega)
{
    const uint i = (uint)get_global_id(0);
    const uint j = (uint)get_global_id(1);
    if (i >= nr || j >= nz) return;  // the global size is rounded up to whole work-groups
    const size_t idx = (size_t)j * nr + i;
    const float c = psi_in[idx];
    if (i == 0 || j == 0 || i == nr - 1 || j == nz - 1) {
        psi_out[idx] = c;  // fixed boundary: copied
        return;
    }
    const float r = rmin + i * dr;
    const float psin = c / psi_axis[0];
    // WRONG: p_axis 0.1% high
    const float current = (psin > 0.0f && psin < 1.0f) ? r * (p_axis * 1.001f) * 4.0f * psin * (1.0f - psin) : 0.0f;
    const float rhs = -mu0 * r * current;
    const float a_w = 1.0f / (dr * dr) + 1.0f / (2.0f * r * dr);
    const float a_e = 1.0f / (dr * dr) - 1.0f / (2.0f * r * dr);
    const float a_ns = 1.0f / (dz * dz);
    const float a_c = -2.0f / (dr * dr) - 2.0f / (dz * dz);
    const float op = a_w * psi_in[idx - 1] + a_e * psi_in[idx + 1] + a_ns * (psi_in[idx - nr] + psi_in[idx + nr]) + a_c * c;
    psi_out[idx] = c + omega * (rhs - op) / a_c;
}
