// heat2d seed (naive on purpose): one cell per work-item, every neighbour read straight from global memory.
// kevo: tune BX 16 32 64 128
// kevo: tune BY 16 8 4 2 1
// kevo: launch heat_step block=BX,BY
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

__kernel void heat_step(__global const float* u_in, __global float* u_out, uint nx, uint ny, float alpha)
{
    const uint x = (uint)get_global_id(0);
    const uint y = (uint)get_global_id(1);
    if (x >= nx || y >= ny) return;  // the global size is rounded up to whole work-groups
    const size_t i = (size_t)y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        u_out[i] = u_in[i];  // Dirichlet: boundary cells keep their value
        return;
    }
    const float c = u_in[i];
    u_out[i] = c + alpha * (u_in[i - 1] + u_in[i + 1] + u_in[i - nx] + u_in[i + nx] - 4.0f * c);
}
