// FAULT: updates only the first n rounded down to a multiple of 1024 (right when 1024 divides n, wrong otherwise).
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = (uint)get_global_id(0);
    if (i < (n & ~1023u)) y[i] = a * x[i] + y[i];
}
