// silu_and_mul best-known OpenCL kernel: VW (16 or 8) outputs per work-item through vloadVW /
// vstoreVW (32- or 16-byte accesses), silu in fp32 with exp (not native_exp, whose error is
// implementation-defined). I is a multiple of 64, so a work-item's elements never straddle a row's end.
// kevo: tune BX 128 256 64
// kevo: tune VW 16 8
// kevo: launch silu_and_mul block=BX,1 per_thread=VW,1
#ifndef BX
#define BX 128
#endif
#ifndef VW
#define VW 16
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FLOATV CAT(float, VW)
#define UINTV CAT(uint, VW)
#define INTV CAT(int, VW)
#define USHORTV CAT(ushort, VW)

// The arithmetic is on whole float8 / uint8 vectors (not eight scalar calls), so a CPU compiler
// such as PoCL's maps it onto SIMD lanes, vector exp included; on a GPU it is the same per-lane work.
FLOATV bf16v_to_float(USHORTV h) { return CAT(as_float, VW)(CAT(convert_uint, VW)(h) << 16); }

// Round to nearest even; a NaN stays a (quiet) NaN.
USHORTV floatv_to_bf16(FLOATV f)
{
    const UINTV u = CAT(as_uint, VW)(f);
    const UINTV rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const INTV is_nan = (u & 0x7fffffffu) > (UINTV)(0x7f800000u);
    return CAT(convert_ushort, VW)(select(rounded, (u >> 16) | 0x40u, is_nan));
}

__kernel void silu_and_mul(__global const ushort* x, __global ushort* out, uint d, uint tokens)
{
    const uint i = (uint)get_global_id(0) * VW, t = (uint)get_global_id(1);
    if (i >= d || t >= tokens) return;
    __global const ushort* row = x + (size_t)t * 2 * d;
    const FLOATV g = bf16v_to_float(CAT(vload, VW)(0, row + i)), u = bf16v_to_float(CAT(vload, VW)(0, row + d + i));
    CAT(vstore, VW)(floatv_to_bf16(g / (1.0f + exp(-g)) * u), 0, out + (size_t)t * d + i);
}
