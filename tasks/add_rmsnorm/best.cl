// add_rmsnorm best-known OpenCL kernel: one work-group per row as in the seed, with eight elements per
// access (vload8/vstore8, 16 bytes) and the tree over BX partial sums. H is a multiple of 64.
// kevo: tune BX 128 256 64 512
// kevo: launch add_rmsnorm block=BX,1
#ifndef BX
#define BX 128
#endif

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

float8 bf16x8_to_float(ushort8 h) { return as_float8(convert_uint8(h) << 16); }

ushort8 float8_to_bf16(float8 f)
{
    return (ushort8)(float_to_bf16(f.s0), float_to_bf16(f.s1), float_to_bf16(f.s2), float_to_bf16(f.s3),
                     float_to_bf16(f.s4), float_to_bf16(f.s5), float_to_bf16(f.s6), float_to_bf16(f.s7));
}

__kernel void add_rmsnorm(__global const ushort* x, __global ushort* residual, __global const ushort* weight, __global ushort* y, uint hidden, uint tokens, float eps)
{
    __local float partial[BX];
    const uint t = (uint)get_group_id(1), lid = (uint)get_local_id(0);
    if (t >= tokens) return;
    __global const ushort* xr = x + (size_t)t * hidden;
    __global ushort* rr = residual + (size_t)t * hidden;
    __global ushort* yr = y + (size_t)t * hidden;
    const uint vectors = hidden / 8;
    float8 acc = (float8)(0.0f);
    for (uint v = lid; v < vectors; v += BX) {
        const ushort8 r = float8_to_bf16(bf16x8_to_float(vload8(v, xr)) + bf16x8_to_float(vload8(v, rr)));
        vstore8(r, v, rr);
        const float8 rf = bf16x8_to_float(r);
        acc += rf * rf;
    }
    partial[lid] = ((acc.s0 + acc.s1) + (acc.s2 + acc.s3)) + ((acc.s4 + acc.s5) + (acc.s6 + acc.s7));
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = BX / 2; s > 0; s >>= 1) {
        if (lid < s) partial[lid] += partial[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv_rms = rsqrt(partial[0] / (float)hidden + eps);
    for (uint v = lid; v < vectors; v += BX)
        vstore8(float8_to_bf16(bf16x8_to_float(vload8(v, rr)) * inv_rms * bf16x8_to_float(vload8(v, weight))), v, yr);
}
