// FAULT: updates only the interior and never writes the boundary cells of u_out, so their NaN poison survives.
extern "C" __global__ void heat_step(const float* u_in, float* u_out, unsigned nx, unsigned ny, float alpha) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x == 0 || y == 0 || x >= nx - 1 || y >= ny - 1) return;
    const size_t i = (size_t)y * nx + x;
    const float c = u_in[i];
    u_out[i] = c + alpha * (u_in[i - 1] + u_in[i + 1] + u_in[i - nx] + u_in[i + nx] - 4.0f * c);
}
