// saxpy best-known OpenCL kernel: y <- a*x + y in place. The CUDA best.cu's design in OpenCL C:
// each work-item loads EPT/4 float4 (vload4) of x and of y before any arithmetic, so several
// 16-byte requests are in flight per work-item; within a pass neighbouring work-items touch
// neighbouring float4 (coalesced on GPUs, vectorisable on CPUs). The n % 4 tail is done by
// work-group 0. A group-stride outer loop keeps it correct for any global size.
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture): EPT consecutive floats per
// work-item as explicit float16 vectors (vload16/vstore16: one 64-byte line each on AVX-512), the
// chunk's tail element by element. Saxpy is memory-bound on a CPU as on a GPU: this path moves
// the bytes at the seed's rate (PoCL already vectorises the seed's one element per work-item
// across work-items); the earlier strided form, element base + k*BLOCK for k < EPT, was 0.49-0.78x
// the seed on an idle 2-core PoCL 3.1 machine.
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
// Explicit vectors: EPT consecutive floats per work-item as float16 (or floatEPT below 16), one
// 64-byte line per load on AVX-512, so nothing depends on PoCL vectorising across work-items.
#if EPT >= 16
#define VW 16
#else
#define VW EPT
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VFLOAT CAT(float, VW)
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1))) void saxpy(__global const float* restrict x, __global float* restrict y, float a, uint n)
{
    const uint first = ((uint)get_group_id(0) * BLOCK + (uint)get_local_id(0)) * EPT;
    if (first + EPT <= n) {
        for (uint c = 0; c < EPT / VW; ++c) {
            const uint v = first / VW + c;
            CAT(vstore, VW)(fma((VFLOAT)(a), CAT(vload, VW)(v, x), CAT(vload, VW)(v, y)), v, y);
        }
    } else {
        for (uint i = first; i < n; ++i) y[i] = fma(a, x[i], y[i]);
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
