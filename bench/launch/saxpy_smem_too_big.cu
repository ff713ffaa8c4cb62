// The launch contract on a GPU: asks for more dynamic shared memory than any block can have
// (300000 bytes; the H200 allows 232448 per block), which kevo must refuse as a verdict naming the
// limit, before any launch.
// kevo: launch saxpy block=256 smem=300000
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n)
{
    extern __shared__ float staged[];
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    staged[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = a * staged[threadIdx.x] + y[i];
}
