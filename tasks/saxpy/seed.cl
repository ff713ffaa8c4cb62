// saxpy seed (naive on purpose): y <- a*x + y, PT elements per work-item, BLOCK work-items per group.
// kevo: tune BLOCK 256 128 512 1024
// kevo: tune PT 1 2 4 8
// kevo: launch saxpy block=BLOCK per_thread=PT
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef PT
#define PT 1
#endif

__kernel void saxpy(__global const float* x, __global float* y, float a, uint n)
{
    // A work-group covers PT * local size consecutive elements; on each pass neighbouring
    // work-items touch neighbouring addresses. The global size is rounded up: check the end.
    const uint base = (uint)get_group_id(0) * (uint)get_local_size(0) * PT + (uint)get_local_id(0);
    for (uint k = 0; k < PT; ++k) {
        const uint i = base + k * (uint)get_local_size(0);
        if (i < n) y[i] = a * x[i] + y[i];
    }
}
