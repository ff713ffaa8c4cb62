// The launch contract on a GPU (scripts/gpu.sh tensor-ceilings): saxpy staged through 96 KiB of
// dynamic shared memory, above the 48 KiB a kernel gets without the host raising its limit. Each
// block writes the top word of the buffer, so a launch that did not pass the full size would fault.
// kevo: launch saxpy block=256 smem=98304
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n)
{
    extern __shared__ float staged[];  // 98304 bytes: 24576 floats
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    staged[threadIdx.x] = i < n ? x[i] : 0.0f;
    staged[24575 - threadIdx.x] = 0.0f;
    __syncthreads();
    if (i < n) y[i] = a * staged[threadIdx.x] + y[i] + staged[24575 - threadIdx.x];
}
