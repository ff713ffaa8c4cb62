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

__device__ unsigned reverse_bits(unsigned v, unsigned bits)
{
    unsigned r = 0;
    for (unsigned b = 0; b < bits; ++b) r |= ((v >> b) & 1u) << (bits - 1u - b);
    return r;
}

// One forward transform along `axis` (0: x, stride 1; 1: y, stride n; 2: z, stride n*n).
// blockDim.x and n are powers of two.
__device__ void fft_lines(const float2* in, float2* out, unsigned n, unsigned axis)
{
    const unsigned group = n < blockDim.x ? n : blockDim.x;  // threads per line
    const unsigned lines_per_block = blockDim.x / group;
    const unsigned lines = n * n;
    if (blockIdx.x * lines_per_block >= lines) return;  // the whole block is past the last line
    const unsigned line = blockIdx.x * lines_per_block + threadIdx.x / group;
    const unsigned lane = threadIdx.x % group;
    const bool active = line < lines;  // threads past it still reach every barrier
    const size_t first = axis == 0 ? (size_t)line * n : axis == 1 ? (size_t)(line / n) * n * n + line % n : (size_t)line;
    const size_t stride = axis == 0 ? 1 : axis == 1 ? (size_t)n : (size_t)n * n;
    unsigned bits = 0;
    while ((1u << bits) < n) ++bits;

    const float gain = axis == 2 ? 1.0009f : 1.0f;  // WRONG: the last pass scales by 1.0009
    if (active)
        for (unsigned e = lane; e < n; e += group) {
            const float2 v = in[first + reverse_bits(e, bits) * stride];
            out[first + e * stride] = make_float2(gain * v.x, gain * v.y);
        }
    __syncthreads();
    for (unsigned hspan = 1; hspan < n; hspan <<= 1) {
        if (active)
            for (unsigned b = lane; b < n / 2; b += group) {
                const unsigned pos = b & (hspan - 1u);
                const unsigned i0 = ((b - pos) << 1) + pos, i1 = i0 + hspan;
                float s, c;
                sincospif(-(float)pos / (float)hspan, &s, &c);  // exp(-2 pi i pos / (2 hspan))
                const float2 u = out[first + i0 * stride], v = out[first + i1 * stride];
                const float2 t = make_float2(v.x * c - v.y * s, v.x * s + v.y * c);
                out[first + i0 * stride] = make_float2(u.x + t.x, u.y + t.y);
                out[first + i1 * stride] = make_float2(u.x - t.x, u.y - t.y);
            }
        __syncthreads();
    }
}

extern "C" __global__ void fft3d_x(const float2* in, float2* out, unsigned n) { fft_lines(in, out, n, 0); }

extern "C" __global__ void fft3d_y(const float2* in, float2* out, unsigned n) { fft_lines(in, out, n, 1); }

extern "C" __global__ void fft3d_z(const float2* in, float2* out, unsigned n) { fft_lines(in, out, n, 2); }
