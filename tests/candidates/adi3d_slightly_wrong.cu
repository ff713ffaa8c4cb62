// adi3d_slightly_wrong: every line solve uses mu * 1.01 (a coefficient 1% off, as a mu rounded to
// a short literal or a low-precision cast would be), in the diagonal and both off-diagonals.
// kevo: tune BX 32 16 64 8
// kevo: tune BY 4 8 2 1 16
// kevo: launch adi_x block=BX,BY
// kevo: launch adi_y block=BX,BY
// kevo: launch adi_z block=BX,BY
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 4
#endif

// c'_j of the system -mu u[j-1] + (1+2mu) u[j] - mu u[j+1] = d[j], j = 1, 2, ...:
// c'_j = -(mu/r1) (1 - q^j) / (1 - q^(j+1)), r1 > r2 the roots of t^2 - (1+2mu) t + mu^2, q = r2/r1.
__device__ float cprime(unsigned j, float mu, float r1, float q)
{
    const float t = exp2f((float)j * log2f(q));  // q^j
    return -(mu / r1) * (1.0f - t) / (1.0f - q * t);
}

// Solves the line of `len` points base + j*stride (j = 0 .. len-1); copies it if it touches a face.
__device__ void solve_line(const float* u_in, float* u_out, size_t base, size_t stride, unsigned len, bool face, float mu)
{
    if (face) {
        for (unsigned j = 0; j < len; ++j) u_out[base + j * stride] = u_in[base + j * stride];
        return;
    }
    mu *= 1.01f;  // WRONG: mu 1% high
    const float b = 1.0f + 2.0f * mu;
    const float s = sqrtf(1.0f + 4.0f * mu);
    const float r1 = 0.5f * (b + s);
    const float q = (b - s) / (b + s);
    const float left = u_in[base];
    const float right = u_in[base + (size_t)(len - 1) * stride];
    u_out[base] = left;  // Dirichlet endpoints are copied
    u_out[base + (size_t)(len - 1) * stride] = right;
    float c = 0.0f, d = 0.0f;  // c'_{j-1} and d'_{j-1}
    for (unsigned j = 1; j + 1 < len; ++j) {
        float rhs = u_in[base + j * stride];
        if (j == 1) rhs += mu * left;
        if (j + 2 == len) rhs += mu * right;
        const float den = b + mu * c;
        c = -mu / den;
        d = (rhs + mu * d) / den;
        u_out[base + j * stride] = d;
    }
    float x = d;  // the last unknown, j = len-2
    for (unsigned j = len - 2; j-- > 1;) {
        x = u_out[base + j * stride] - cprime(j, mu, r1, q) * x;
        u_out[base + j * stride] = x;
    }
}

extern "C" __global__ void adi_x(const float* u_in, float* u_out, unsigned nx, unsigned ny, unsigned nz, float mu)
{
    const unsigned y = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned z = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= ny || z >= nz) return;  // the grid is rounded up to whole blocks
    const bool face = y == 0 || z == 0 || y == ny - 1 || z == nz - 1;
    solve_line(u_in, u_out, ((size_t)z * ny + y) * nx, 1, nx, face, mu);
}

extern "C" __global__ void adi_y(const float* u_in, float* u_out, unsigned nx, unsigned ny, unsigned nz, float mu)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned z = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || z >= nz) return;
    const bool face = x == 0 || z == 0 || x == nx - 1 || z == nz - 1;
    solve_line(u_in, u_out, (size_t)z * ny * nx + x, nx, ny, face, mu);
}

extern "C" __global__ void adi_z(const float* u_in, float* u_out, unsigned nx, unsigned ny, unsigned nz, float mu)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    const bool face = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
    solve_line(u_in, u_out, (size_t)y * nx + x, (size_t)nx * ny, nz, face, mu);
}
