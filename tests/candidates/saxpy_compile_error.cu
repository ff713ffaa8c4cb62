// FAULT: syntax error on line 4 (a dangling '+' before ';'), so it never compiles.
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] +;
}
