// Peer of the saxpy task in `kevo bench`: y <- a x + y with one float4 per thread (16-byte loads
// and stores), the plain vectorised kernel a user would write. Thread n/4 handles the 0-3 leftover
// elements. Buffers are allocated 256-byte aligned, so the float4 casts are aligned.
extern "C" __global__ void peer_axpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned quads = n / 4;
    if (i < quads) {
        const float4 xv = reinterpret_cast<const float4*>(x)[i];
        float4 yv = reinterpret_cast<float4*>(y)[i];
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        reinterpret_cast<float4*>(y)[i] = yv;
    } else if (i == quads) {
        for (unsigned k = 4 * quads; k < n; ++k) y[k] = a * x[k] + y[k];
    }
}
