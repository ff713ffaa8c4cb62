// FAULT: never terminates: loops while y[0] == y[0], which stays true (volatile, so it cannot be removed).
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;
    volatile __global float* vy = y;
    // y[0] only grows towards +-Inf (never NaN), so the comparison never fails.
    while (vy[0] == vy[0]) vy[i] = a * x[i] + vy[i];
}
