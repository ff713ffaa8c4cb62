// BROKEN on purpose (fft3d_wrong_constant): hard-codes the twiddle sign +1 (the inverse transform's) instead
// of the forward transform's -1.
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

    if (active)
        for (unsigned e = lane; e < n; e += group) out[first + e * stride] = in[first + reverse_bits(e, bits) * stride];
    __syncthreads();
    for (unsigned hspan = 1; hspan < n; hspan <<= 1) {
        if (active)
            for (unsigned b = lane; b < n / 2; b += group) {
                const unsigned pos = b & (hspan - 1u);
                const unsigned i0 = ((b - pos) << 1) + pos, i1 = i0 + hspan;
                float s, c;
                sincospif((float)pos / (float)hspan, &s, &c);  // + sign: the inverse transform's twiddle  // exp(-2 pi i pos / (2 hspan))
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
