// saxpy best-known OpenCL kernel: y <- a*x + y in place. The CUDA best.cu's design in OpenCL C:
// each work-item loads EPT/4 float4 (vload4) of x and of y before any arithmetic, so several
// 16-byte requests are in flight per work-item; within a pass neighbouring work-items touch
// neighbouring float4 (coalesced on GPUs, vectorisable on CPUs). The n % 4 tail is done by
// work-group 0. A group-stride outer loop keeps it correct for any global size.
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture): element base + k*BLOCK for
// k < EPT, with no group-stride loop, so that PoCL vectorises its loop over the work-items (it
// does so only when a work-item's code has no loop of its own); the float4 form's outer loop
// made it 0.6x the seed there. Saxpy is memory-bound on a CPU as on a GPU: this path moves the
// bytes at about the seed's rate.
// kevo: tune PATH auto gpu cpu
// kevo: tune BLOCK 256 128 512
// kevo: tune EPT 16 8 32 4
// kevo: launch saxpy block=BLOCK per_thread=EPT
#ifndef PATH
#define PATH auto
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef EPT
#define EPT 16
#endif
#define PT4 (EPT / 4)
#if defined(POCL_DEVICE_ADDRESS_BITS) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PATH_auto 2
#else
#define PATH_auto 1
#endif
#define PATH_gpu 1
#define PATH_cpu 2
#define PATH_ID_(p) PATH_##p
#define PATH_ID(p) PATH_ID_(p)
#if PATH_ID(PATH) != 1 && PATH_ID(PATH) != 2
#error "PATH must be auto, gpu or cpu"
#endif
#define CPU_PATH (PATH_ID(PATH) == 2)

#if CPU_PATH
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void saxpy(__global const float* restrict x, __global float* restrict y, float a, uint n)
{
    const uint base = (uint)get_group_id(0) * (BLOCK * EPT) + (uint)get_local_id(0);
#pragma unroll
    for (uint k = 0; k < EPT; ++k) {
        const uint i = base + k * BLOCK;
        if (i < n) y[i] = fma(a, x[i], y[i]);
    }
}
#else
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
#endif
