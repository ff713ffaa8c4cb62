// fft3d_slightly_wrong: the seed with every output scaled by 1.0009 (the last pass multiplies its
// input by a gain of 1.0009, as a mistyped normalisation or a twiddle table rounded too coarsely
// would): a 0.09% error in every element, well inside the first-draft 1e-3 + 1e-3 * max|X|.
// kevo: tune BLOCK 256 64 128 512 1024
// kevo: launch fft3d_x block=BLOCK
// kevo: launch fft3d_y block=BLOCK
// kevo: launch fft3d_z block=BLOCK
#ifndef BLOCK
#define BLOCK 256
#endif

uint reverse_bits(uint v, uint bits)
{
    uint r = 0;
    for (uint b = 0; b < bits; ++b) r |= ((v >> b) & 1u) << (bits - 1u - b);
    return r;
}

// One forward transform along `axis` (0: x, stride 1; 1: y, stride n; 2: z, stride n*n).
// The work-group size and n are powers of two.
void fft_lines(__global const float2* in, __global float2* out, uint n, uint axis)
{
    const uint size = (uint)get_local_size(0), tid = (uint)get_local_id(0), blk = (uint)get_group_id(0);
    const uint group = n < size ? n : size;  // work-items per line
    const uint lines_per_block = size / group;
    const uint lines = n * n;
    if (blk * lines_per_block >= lines) return;  // the whole group is past the last line
    const uint line = blk * lines_per_block + tid / group;
    const uint lane = tid % group;
    const bool active = line < lines;  // work-items past it still reach every barrier
    const size_t first = axis == 0 ? (size_t)line * n : axis == 1 ? (size_t)(line / n) * n * n + line % n : (size_t)line;
    const size_t stride = axis == 0 ? 1 : axis == 1 ? (size_t)n : (size_t)n * n;
    uint bits = 0;
    while ((1u << bits) < n) ++bits;

    const float gain = axis == 2 ? 1.0009f : 1.0f;  // WRONG: the last pass scales by 1.0009
    if (active)
        for (uint e = lane; e < n; e += group) out[first + e * stride] = gain * in[first + reverse_bits(e, bits) * stride];
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (uint hspan = 1; hspan < n; hspan <<= 1) {
        if (active)
            for (uint b = lane; b < n / 2; b += group) {
                const uint pos = b & (hspan - 1u);
                const uint i0 = ((b - pos) << 1) + pos, i1 = i0 + hspan;
                const float angle = -(float)pos / (float)hspan;  // exp(-2 pi i pos / (2 hspan)) = exp(i pi angle)
                const float s = sinpi(angle), c = cospi(angle);
                const float2 u = out[first + i0 * stride], v = out[first + i1 * stride];
                const float2 t = (float2)(v.x * c - v.y * s, v.x * s + v.y * c);
                out[first + i0 * stride] = u + t;
                out[first + i1 * stride] = u - t;
            }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

__kernel void fft3d_x(__global const float2* in, __global float2* out, uint n) { fft_lines(in, out, n, 0); }

__kernel void fft3d_y(__global const float2* in, __global float2* out, uint n) { fft_lines(in, out, n, 1); }

__kernel void fft3d_z(__global const float2* in, __global float2* out, uint n) { fft_lines(in, out, n, 2); }
