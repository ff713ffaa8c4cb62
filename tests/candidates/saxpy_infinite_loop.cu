// FAULT: never terminates: loops while y[0] == y[0], which stays true (volatile, so it cannot be removed).
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    volatile float* vy = y;
    // y[0] only grows towards +-Inf (never NaN), so the comparison never fails.
    while (vy[0] == vy[0]) vy[i] = a * x[i] + vy[i];
}
