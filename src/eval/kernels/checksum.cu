// Keyed, order-independent 64-bit checksum of a byte region of a buffer; the same functions as
// checksum.cl (see there and device_checksum.hpp, which has the host twin): one block per tile of
// GROUP * WORDS consecutive words. The block size must be KEVO_CHECKSUM_GROUP.
#define KEVO_CHECKSUM_GROUP 256
#define KEVO_CHECKSUM_WORDS 32

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

__device__ unsigned long long kevo_u64(unsigned lo, unsigned hi) { return ((unsigned long long)hi << 32) | lo; }

// Adds the block's partial sums to sums[2 * slot] and sums[2 * slot + 1].
__device__ void kevo_add_group(unsigned s_lo, unsigned s_hi, unsigned* sums, unsigned slot)
{
    __shared__ unsigned lo[KEVO_CHECKSUM_GROUP];
    __shared__ unsigned hi[KEVO_CHECKSUM_GROUP];
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

// Words 0 .. count-1 of a region that starts at word `first` of the buffer.
extern "C" __global__ void kevo_checksum_words(const unsigned* words, unsigned first_lo, unsigned first_hi,
                                               unsigned count_lo, unsigned count_hi, unsigned key_lo, unsigned key_hi,
                                               unsigned* sums, unsigned slot)
{
    const unsigned long long first = kevo_u64(first_lo, first_hi), count = kevo_u64(count_lo, count_hi);
    const unsigned long long tile = (unsigned long long)blockIdx.x * (KEVO_CHECKSUM_GROUP * KEVO_CHECKSUM_WORDS);
    unsigned s_lo = 0, s_hi = 0;
#pragma unroll
    for (unsigned k = 0; k < KEVO_CHECKSUM_WORDS; ++k) {
        const unsigned long long j = tile + (unsigned long long)k * KEVO_CHECKSUM_GROUP + threadIdx.x;
        if (j < count) {
            const unsigned w = words[first + j];
            s_lo += kevo_mix_lo(w, j, key_lo);
            s_hi += kevo_mix_hi(w, j, key_hi);
        }
    }
    kevo_add_group(s_lo, s_hi, sums, slot);
}

// Words `start` .. ceil(size / 4)-1 of the region of `size` bytes at byte `offset` of the buffer.
extern "C" __global__ void kevo_checksum_bytes(const unsigned char* bytes, unsigned offset_lo, unsigned offset_hi,
                                               unsigned size_lo, unsigned size_hi, unsigned start_lo,
                                               unsigned start_hi, unsigned key_lo, unsigned key_hi, unsigned* sums,
                                               unsigned slot)
{
    const unsigned long long offset = kevo_u64(offset_lo, offset_hi), size = kevo_u64(size_lo, size_hi);
    const unsigned long long start = kevo_u64(start_lo, start_hi), count = (size + 3) / 4;
    const unsigned long long tile =
        start + (unsigned long long)blockIdx.x * (KEVO_CHECKSUM_GROUP * KEVO_CHECKSUM_WORDS);
    unsigned s_lo = 0, s_hi = 0;
    for (unsigned k = 0; k < KEVO_CHECKSUM_WORDS; ++k) {
        const unsigned long long j = tile + (unsigned long long)k * KEVO_CHECKSUM_GROUP + threadIdx.x;
        if (j >= count) continue;
        unsigned w = 0;
        for (unsigned b = 0; b < 4; ++b)
            if (4 * j + b < size) w |= (unsigned)bytes[offset + 4 * j + b] << (8 * b);
        s_lo += kevo_mix_lo(w, j, key_lo);
        s_hi += kevo_mix_hi(w, j, key_hi);
    }
    kevo_add_group(s_lo, s_hi, sums, slot);
}
