// FAULT: uses its input x as scratch: y comes out right, but x is left zeroed (inputs are read-only).
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float xi = x[i];
    y[i] = a * xi + y[i];
    const_cast<float*>(x)[i] = 0.0f;
}
