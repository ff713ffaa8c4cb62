// add_rmsnorm_only_eps_rows: right everywhere but on rows whose mean square (of the stored r, after
// the residual add) sits near eps: eps is taken as a lower bound, rsqrt(max(ms, eps)), instead of
// added. Where ms >> eps the two agree to far below an ulp; at ms = eps they differ by sqrt(2). The
// outlier trial holds such rows (x = -residual + sqrt(eps) z) in every size; this kernel must fail.
// kevo: tune BX 256 128 512 64
// kevo: launch add_rmsnorm block=BX,1
#ifndef BX
#define BX 256
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel void add_rmsnorm(__global const ushort* x, __global ushort* residual, __global const ushort* weight, __global ushort* y, uint hidden, uint tokens, float eps)
{
    __local float partial[BX];  // BX is a power of two
    const uint t = (uint)get_group_id(1), lid = (uint)get_local_id(0);
    if (t >= tokens) return;  // uniform over the work-group
    const size_t base = (size_t)t * hidden;
    float sum = 0.0f;
    for (uint i = lid; i < hidden; i += BX) {
        // x + residual is exact in fp32; the stored residual is its one rounding to bf16, and the
        // norm is of the stored value.
        const ushort r = float_to_bf16(bf16_to_float(x[base + i]) + bf16_to_float(residual[base + i]));
        residual[base + i] = r;
        const float rf = bf16_to_float(r);
        sum += rf * rf;
    }
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = BX / 2; s > 0; s >>= 1) {
        if (lid < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // WRONG (only where the mean square is near eps): eps as a lower bound, max(ms, eps), not added.
    const float inv_rms = rsqrt(fmax(partial[0] / (float)hidden, eps));
    for (uint i = lid; i < hidden; i += BX)
        y[base + i] = float_to_bf16(bf16_to_float(residual[base + i]) * inv_rms * bf16_to_float(weight[i]));
}
