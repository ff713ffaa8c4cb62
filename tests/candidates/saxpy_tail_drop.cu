// FAULT: updates only the first n rounded down to a multiple of 1024 (right when 1024 divides n, wrong otherwise).
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (n & ~1023u)) y[i] = a * x[i] + y[i];
}
