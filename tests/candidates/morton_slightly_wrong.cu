// morton_slightly_wrong: alpha rounded to half precision (its mantissa cut to 10 bits, as a
// half-precision coefficient would be): 0.1 becomes 0.099976, 2.4e-4 off. The first-draft
// tolerance (1e-4 + 1e-5 max|ref|) passed its nominal trial.
// kevo: tune BX 256 128 512 1024 64
// kevo: launch morton_stencil block=BX
#ifndef BX
#define BX 256
#endif

__device__ unsigned long long morton_encode(unsigned x, unsigned y, unsigned z, unsigned log_n)
{
    unsigned long long m = 0;
    for (unsigned b = 0; b < log_n; ++b) {
        m |= (unsigned long long)((x >> b) & 1u) << (3 * b);
        m |= (unsigned long long)((y >> b) & 1u) << (3 * b + 1);
        m |= (unsigned long long)((z >> b) & 1u) << (3 * b + 2);
    }
    return m;
}

extern "C" __global__ void morton_stencil(const float* u_in, float* u_out, unsigned n, unsigned log_n, float alpha)
{
    const unsigned long long m = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long cells = (unsigned long long)n * n * n;
    if (m >= cells) return;  // the grid is rounded up to whole blocks
    unsigned x = 0, y = 0, z = 0;
    for (unsigned b = 0; b < log_n; ++b) {
        x |= (unsigned)((m >> (3 * b)) & 1u) << b;
        y |= (unsigned)((m >> (3 * b + 1)) & 1u) << b;
        z |= (unsigned)((m >> (3 * b + 2)) & 1u) << b;
    }
    const float c = u_in[m];
    const float a = __uint_as_float(__float_as_uint(alpha) & 0xFFFFE000u);  // WRONG: alpha rounded to half
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
        u_out[m] = c;  // Dirichlet: face cells copy through
        return;
    }
    const float sum = u_in[morton_encode(x - 1, y, z, log_n)] + u_in[morton_encode(x + 1, y, z, log_n)]
                    + u_in[morton_encode(x, y - 1, z, log_n)] + u_in[morton_encode(x, y + 1, z, log_n)]
                    + u_in[morton_encode(x, y, z - 1, log_n)] + u_in[morton_encode(x, y, z + 1, log_n)];
    u_out[m] = c + a * (sum - 6.0f * c);
}
