// FAULT: correct saxpy, but the last 4 threads also write y[i + 16], i.e. 12..15 elements past the end of y.
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i] + y[i];
    if (i + 4 >= n) y[i + 16] = 12345.0f;
}
