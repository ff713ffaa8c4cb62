// saxpy seed (naive on purpose): y <- a*x + y, PT elements per thread, BLOCK threads per block.
// kevo: tune BLOCK 256 128 512 1024
// kevo: tune PT 1 2 4 8
// kevo: launch saxpy block=BLOCK per_thread=PT
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef PT
#define PT 1
#endif

extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n)
{
    // A block covers PT * blockDim.x consecutive elements; on each pass neighbouring threads touch
    // neighbouring addresses, so accesses stay coalesced. The grid is rounded up: check the end.
    const unsigned base = blockIdx.x * blockDim.x * PT + threadIdx.x;
    for (unsigned k = 0; k < PT; ++k) {
        const unsigned i = base + k * blockDim.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }
}
