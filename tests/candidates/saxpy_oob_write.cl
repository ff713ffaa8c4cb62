// FAULT: correct saxpy, but the last 4 work-items also write y[i + 16], i.e. 12..15 elements past the end of y.
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;
    y[i] = a * x[i] + y[i];
    if (i + 4 >= n) y[i + 16] = 12345.0f;
}
