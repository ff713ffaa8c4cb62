// FAULT: an in-place kernel with its own parameter list (one buffer, one size) where the task passes
// (u_in, u_out, nx, ny, alpha); at launch it would fail with CL_INVALID_ARG_INDEX or compute garbage.
__kernel void heat_step(__global float* u, int nx)
{
    const uint x = (uint)get_global_id(0);
    const uint y = (uint)get_global_id(1);
    if (x == 0 || y == 0 || x >= (uint)nx - 1) return;
    const size_t i = (size_t)y * nx + x;
    u[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx]);
}
