// FAULT: replaces the heat update by a Jacobi average, 0.25 * (sum of the 4 neighbours), in the interior.
__kernel void heat_step(__global const float* u_in, __global float* u_out, uint nx, uint ny, float alpha) {
    const uint x = (uint)get_global_id(0);
    const uint y = (uint)get_global_id(1);
    if (x >= nx || y >= ny) return;
    const size_t i = (size_t)y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        u_out[i] = u_in[i];
        return;
    }
    u_out[i] = 0.25f * (u_in[i - 1] + u_in[i + 1] + u_in[i - nx] + u_in[i + nx]);
}
