// FAULT: writes NaN into y[i] for every i % 1000 == 7; correct everywhere else.
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = i % 1000 == 7 ? __int_as_float(0x7fc00000) : a * x[i] + y[i];
}
