// morton_slightly_wrong: alpha rounded to half precision (its mantissa cut to 10 bits, as a
// half-precision coefficient would be): 0.1 becomes 0.099976, 2.4e-4 off. The first-draft
// tolerance (1e-4 + 1e-5 max|ref|) passed its nominal trial.
// kevo: tune BX 256 128 512 1024 64
// kevo: launch morton_stencil block=BX
#ifndef BX
#define BX 256
#endif

ulong morton_encode(uint x, uint y, uint z, uint log_n)
{
    ulong m = 0;
    for (uint b = 0; b < log_n; ++b) {
        m |= (ulong)((x >> b) & 1u) << (3 * b);
        m |= (ulong)((y >> b) & 1u) << (3 * b + 1);
        m |= (ulong)((z >> b) & 1u) << (3 * b + 2);
    }
    return m;
}

__kernel void morton_stencil(__global const float* u_in, __global float* u_out, uint n, uint log_n, float alpha)
{
    const ulong m = (ulong)get_global_id(0);
    const ulong cells = (ulong)n * n * n;
    if (m >= cells) return;  // the global size is rounded up to whole work-groups
    uint x = 0, y = 0, z = 0;
    for (uint b = 0; b < log_n; ++b) {
        x |= (uint)((m >> (3 * b)) & 1u) << b;
        y |= (uint)((m >> (3 * b + 1)) & 1u) << b;
        z |= (uint)((m >> (3 * b + 2)) & 1u) << b;
    }
    const float c = u_in[m];
    const float a = as_float(as_uint(alpha) & 0xFFFFE000u);  // WRONG: alpha rounded to half
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
        u_out[m] = c;  // Dirichlet: face cells copy through
        return;
    }
    const float sum = u_in[morton_encode(x - 1, y, z, log_n)] + u_in[morton_encode(x + 1, y, z, log_n)]
                    + u_in[morton_encode(x, y - 1, z, log_n)] + u_in[morton_encode(x, y + 1, z, log_n)]
                    + u_in[morton_encode(x, y, z - 1, log_n)] + u_in[morton_encode(x, y, z + 1, log_n)];
    u_out[m] = c + a * (sum - 6.0f * c);
}
