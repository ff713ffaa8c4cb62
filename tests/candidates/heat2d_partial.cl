// FAULT: updates only the interior and never writes the boundary cells of u_out, so their NaN poison survives.
__kernel void heat_step(__global const float* u_in, __global float* u_out, uint nx, uint ny, float alpha) {
    const uint x = (uint)get_global_id(0);
    const uint y = (uint)get_global_id(1);
    if (x == 0 || y == 0 || x >= nx - 1 || y >= ny - 1) return;
    const size_t i = (size_t)y * nx + x;
    const float c = u_in[i];
    u_out[i] = c + alpha * (u_in[i - 1] + u_in[i + 1] + u_in[i - nx] + u_in[i + nx] - 4.0f * c);
}
