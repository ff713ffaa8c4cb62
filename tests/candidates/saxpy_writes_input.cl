// FAULT: uses its input x as scratch: y comes out right, but x is left zeroed (inputs are read-only).
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;
    const float xi = x[i];
    y[i] = a * xi + y[i];
    ((__global float*)x)[i] = 0.0f;
}
