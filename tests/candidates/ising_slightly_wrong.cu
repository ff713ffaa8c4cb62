// ising_slightly_wrong: the acceptance table is read with its index clamped to 3 (a table of four
// entries assumed), so a spin whose four neighbours all agree with it flips with exp(-4 beta)
// instead of exp(-8 beta). Only those sites differ; the check is bit-exact.
// kevo: tune BX 16 32 64 128
// kevo: tune BY 16 8 4 2 1
// kevo: launch ising_step block=BX,BY
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif

// Murmur3's 32-bit finaliser: the exact hash the reference uses.
__device__ unsigned fmix32(unsigned x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

extern "C" __global__ void ising_step(signed char* spins, const float* p_accept, unsigned nx, unsigned ny, unsigned step, unsigned seed)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;  // the grid is rounded up to whole blocks
    if (((i + j) & 1u) != (step & 1u)) return;  // only this step's colour is updated
    const unsigned left = i == 0 ? nx - 1 : i - 1, right = i + 1 == nx ? 0 : i + 1;
    const unsigned down = j == 0 ? ny - 1 : j - 1, up = j + 1 == ny ? 0 : j + 1;
    const unsigned site = j * nx + i;
    const int s = spins[site];
    const int h = spins[j * nx + left] + spins[j * nx + right] + spins[down * nx + i] + spins[up * nx + i];
    const float pa = p_accept[min((s * h + 4) / 2, 3)];  // WRONG: clamped at 3
    const unsigned x = fmix32(fmix32(seed + step * 0x9E3779B9u) ^ site);
    const float u = (float)(x >> 8) * (1.0f / 16777216.0f);
    if (u < pa) spins[site] = (signed char)(-s);
}
