// Peer of the saxpy task in `kevo bench`: y <- a x + y with one float4 per work-item (vload4 /
// vstore4), the plain vectorised kernel a user would write. Work-item n/4 handles the leftovers.
__kernel void peer_axpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = get_global_id(0);
    const uint quads = n / 4;
    if (i < quads) {
        vstore4(a * vload4(i, x) + vload4(i, y), i, y);
    } else if (i == quads) {
        for (uint k = 4 * quads; k < n; ++k) y[k] = a * x[k] + y[k];
    }
}
