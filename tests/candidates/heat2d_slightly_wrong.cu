// heat2d_slightly_wrong: alpha rounded to half precision (its mantissa cut to 10 bits, as a
// half2-vectorised kernel that converts its coefficients would): 0.2 becomes 0.19995, 2.4e-4 off.
// The first-draft 1e-4 absolute tolerance passed its nominal trial.
// kevo: tune BX 16 32 64 128
// kevo: tune BY 16 8 4 2 1
// kevo: launch heat_step block=BX,BY
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

extern "C" __global__ void heat_step(const float* u_in, float* u_out, unsigned nx, unsigned ny, float alpha)
{
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;  // the grid is rounded up to whole blocks
    const size_t i = (size_t)y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        u_out[i] = u_in[i];  // Dirichlet: boundary cells keep their value
        return;
    }
    const float c = u_in[i];
    const float a = __uint_as_float(__float_as_uint(alpha) & 0xFFFFE000u);  // WRONG: alpha rounded to half
    u_out[i] = c + a * (u_in[i - 1] + u_in[i + 1] + u_in[i - nx] + u_in[i + nx] - 4.0f * c);
}
