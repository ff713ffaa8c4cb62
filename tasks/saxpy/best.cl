// saxpy best-known OpenCL kernel: y <- a*x + y in place. The CUDA best.cu's design in OpenCL C:
// each work-item loads EPT/4 float4 (vload4) of x and of y before any arithmetic, so several
// 16-byte requests are in flight per work-item; within a pass neighbouring work-items touch
// neighbouring float4 (coalesced on GPUs, vectorisable on CPUs). The n % 4 tail is done by
// work-group 0. A group-stride outer loop keeps it correct for any global size.
// kevo: tune BLOCK 256 128 512
// kevo: tune EPT 16 8 32 4
// kevo: launch saxpy block=BLOCK per_thread=EPT
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef EPT
#define EPT 16
#endif
#define PT4 (EPT / 4)

__kernel void saxpy(__global const float* restrict x, __global float* restrict y, float a, uint n)
{
    const uint n4 = n >> 2;
    const uint chunk = (uint)get_local_size(0) * PT4;
    const uint stride = (uint)get_num_groups(0) * chunk;
    for (uint base = (uint)get_group_id(0) * chunk + (uint)get_local_id(0); base < n4; base += stride) {
        float4 xv[PT4], yv[PT4];
        for (int k = 0; k < PT4; ++k) {
            const uint f = base + k * (uint)get_local_size(0);
            if (f < n4) {
                xv[k] = vload4(f, x);
                yv[k] = vload4(f, y);
            }
        }
        for (int k = 0; k < PT4; ++k) {
            const uint f = base + k * (uint)get_local_size(0);
            if (f < n4) vstore4(fma((float4)(a), xv[k], yv[k]), f, y);
        }
    }
    if (get_group_id(0) == 0) {
        const uint i = 4 * n4 + (uint)get_local_id(0);
        if (i < n) y[i] = fma(a, x[i], y[i]);
    }
}
