// Evicts the L2 cache between timed runs: reads and writes a buffer larger than the cache,
// one element per thread (no loop, so CPU OpenCL implementations vectorise it too).
extern "C" __global__ void kevo_flush(float* buffer, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buffer[i] = buffer[i] * 0.5f + 1.0f;
}
