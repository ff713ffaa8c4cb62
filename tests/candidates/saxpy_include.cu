// ATTACK: includes a file from the host machine (/etc/passwd); the static scan must refuse it before compiling.
#include "/etc/passwd"
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
