// saxpy_slightly_wrong: adds an offset of 1e-4 to every element (y = a*x + y + 1e-4), as a stray
// bias or a mistyped rounding term would. Every element is off by far less than 1e-5 * max|y|
// (the first-draft tolerance passed it); each is off by hundreds of its own rounding error.
// kevo: tune BLOCK 256 128 512 1024
// kevo: launch saxpy block=BLOCK

extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] + 1e-4f;  // WRONG: the offset
}
