// FAULT: an in-place kernel with its own parameter list (one buffer, one size) where the task passes
// (u_in, u_out, nx, ny, alpha); launched with the task's arguments it would read garbage.
extern "C" __global__ void heat_step(float* u, int nx) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x == 0 || y == 0 || x >= (unsigned)nx - 1) return;
    const size_t i = (size_t)y * nx + x;
    u[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx]);
}
