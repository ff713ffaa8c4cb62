// ATTACK: includes a file from the host machine (/etc/passwd); the static scan must refuse it before compiling.
#include "/etc/passwd"
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = (uint)get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}
