// FAULT: writes NaN into y[i] for every i % 1000 == 7; correct everywhere else.
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;
    y[i] = i % 1000 == 7 ? as_float(0x7fc00000u) : a * x[i] + y[i];
}
