// The sm_90a opt-in on a GPU: saxpy that also issues wgmma.fence, an instruction only the
// architecture-specific target has; it compiles, loads and runs only under `kevo: target sm_90a`.
// kevo: target sm_90a
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
