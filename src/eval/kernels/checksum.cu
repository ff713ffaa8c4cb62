// Keyed, order-independent 64-bit checksum of a byte region of a buffer; the same function as
// checksum.cl (see there and device_checksum.hpp, which has the host twin). The block size must be 256.
#define KEVO_CHECKSUM_GROUP 256

__device__ unsigned kevo_fmix32(unsigned x)
{
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

__device__ unsigned kevo_mix_lo(unsigned w, unsigned long long j, unsigned key)
{
    return kevo_fmix32((w ^ key) + (unsigned)j * 0x9E3779B9u + (unsigned)(j >> 32) * 0x7FEB352Du);
}

__device__ unsigned kevo_mix_hi(unsigned w, unsigned long long j, unsigned key)
{
    return kevo_fmix32((w ^ key) + (unsigned)j * 0xC2B2AE3Du + (unsigned)(j >> 32) * 0x27D4EB2Fu + 0x165667B1u);
}

// Word j of the region [offset, offset + size) of the buffer; bytes past its end read as zero.
__device__ unsigned kevo_word(const unsigned* words, const unsigned char* bytes, unsigned long long offset,
                              unsigned long long size, unsigned long long j)
{
    const unsigned long long at = 4 * j;
    if ((offset & 3) == 0 && at + 4 <= size) return words[(offset >> 2) + j];
    unsigned w = 0;
    for (unsigned b = 0; b < 4; ++b)
        if (at + b < size) w |= (unsigned)bytes[offset + at + b] << (8 * b);
    return w;
}

// `words` and `bytes` are the same buffer; sums[2 * slot] and sums[2 * slot + 1] must start at zero.
extern "C" __global__ void kevo_checksum(const unsigned* words, const unsigned char* bytes, unsigned offset_lo,
                                         unsigned offset_hi, unsigned size_lo, unsigned size_hi, unsigned key_lo,
                                         unsigned key_hi, unsigned* sums, unsigned slot)
{
    __shared__ unsigned lo[KEVO_CHECKSUM_GROUP];
    __shared__ unsigned hi[KEVO_CHECKSUM_GROUP];
    const unsigned long long offset = ((unsigned long long)offset_hi << 32) | offset_lo;
    const unsigned long long size = ((unsigned long long)size_hi << 32) | size_lo;
    const unsigned long long count = (size + 3) / 4;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned s_lo = 0, s_hi = 0;
    for (unsigned long long j = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; j < count; j += stride) {
        const unsigned w = kevo_word(words, bytes, offset, size, j);
        s_lo += kevo_mix_lo(w, j, key_lo);
        s_hi += kevo_mix_hi(w, j, key_hi);
    }
    const unsigned t = threadIdx.x;
    lo[t] = s_lo;
    hi[t] = s_hi;
    __syncthreads();
    for (unsigned s = KEVO_CHECKSUM_GROUP / 2; s > 0; s >>= 1) {
        if (t < s) {
            lo[t] += lo[t + s];
            hi[t] += hi[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(&sums[2 * slot], lo[0]);
        atomicAdd(&sums[2 * slot + 1], hi[0]);
    }
}
