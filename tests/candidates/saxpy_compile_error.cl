// FAULT: syntax error on line 4 (a dangling '+' before ';'), so it never compiles.
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
    const uint i = (uint)get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i] +;
}
