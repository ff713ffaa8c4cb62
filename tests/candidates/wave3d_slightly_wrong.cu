// wave3d_slightly_wrong: the Laplacian's weight is alpha * 1.001 (a constant 0.1% off, as a
// coefficient folded into a rounded literal would be).
// kevo: tune BX 8 16 32 64
// kevo: tune BY 8 4 2 1
// kevo: tune BZ 4 2 1 8
// kevo: launch wave_step block=BX,BY,BZ
#ifndef BX
#define BX 8
#endif
#ifndef BY
#define BY 8
#endif
#ifndef BZ
#define BZ 4
#endif

extern "C" __global__ void wave_step(const float* u_prev, const float* u_curr, float* u_next, unsigned nx, unsigned ny, unsigned nz, float alpha)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    const unsigned z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;  // the grid is rounded up to whole blocks
    const size_t sy = nx;
    const size_t sz = (size_t)nx * ny;
    const size_t i = (size_t)z * sz + (size_t)y * sy + x;
    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
        u_next[i] = u_curr[i];  // Dirichlet: face cells copy u_curr
        return;
    }
    const float u = u_curr[i];
    const float lap = u_curr[i - 1] + u_curr[i + 1] + u_curr[i - sy] + u_curr[i + sy] + u_curr[i - sz] + u_curr[i + sz] - 6.0f * u;
    u_next[i] = 2.0f * u - u_prev[i] + (alpha * 1.001f) * lap;  // WRONG: alpha 0.1% high
}
