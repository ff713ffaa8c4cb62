// Keyed, order-independent 64-bit checksum of a byte region of a buffer (see device_checksum.hpp,
// which has the host twin): word j of the region (4 bytes, little-endian, the last one zero-padded)
// adds mix_lo(w, j) and mix_hi(w, j) to two 32-bit sums. Each mix is a bijection of w for a fixed j,
// so a change to any single word always changes both sums. OpenCL 1.2: 32-bit atomics on global
// memory only, one pair per work-group after a local reduction. The work-group size must be 256.
#define KEVO_CHECKSUM_GROUP 256

uint kevo_fmix32(uint x) {
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

uint kevo_mix_lo(uint w, ulong j, uint key) {
    return kevo_fmix32((w ^ key) + (uint)j * 0x9E3779B9u + (uint)(j >> 32) * 0x7FEB352Du);
}

uint kevo_mix_hi(uint w, ulong j, uint key) {
    return kevo_fmix32((w ^ key) + (uint)j * 0xC2B2AE3Du + (uint)(j >> 32) * 0x27D4EB2Fu + 0x165667B1u);
}

// Word j of the region [offset, offset + size) of the buffer; bytes past its end read as zero.
uint kevo_word(__global const uint* words, __global const uchar* bytes, ulong offset, ulong size, ulong j) {
    const ulong at = 4 * j;
    if ((offset & 3) == 0 && at + 4 <= size) return words[(offset >> 2) + j];
    uint w = 0;
    for (uint b = 0; b < 4; ++b)
        if (at + b < size) w |= (uint)bytes[offset + at + b] << (8 * b);
    return w;
}

// `words` and `bytes` are the same buffer; sums[2 * slot] and sums[2 * slot + 1] must start at zero.
__kernel void kevo_checksum(__global const uint* words, __global const uchar* bytes, uint offset_lo, uint offset_hi,
                            uint size_lo, uint size_hi, uint key_lo, uint key_hi, __global uint* sums, uint slot) {
    __local uint lo[KEVO_CHECKSUM_GROUP];
    __local uint hi[KEVO_CHECKSUM_GROUP];
    const ulong offset = ((ulong)offset_hi << 32) | offset_lo;
    const ulong size = ((ulong)size_hi << 32) | size_lo;
    const ulong count = (size + 3) / 4;
    uint s_lo = 0, s_hi = 0;
    for (ulong j = get_global_id(0); j < count; j += get_global_size(0)) {
        const uint w = kevo_word(words, bytes, offset, size, j);
        s_lo += kevo_mix_lo(w, j, key_lo);
        s_hi += kevo_mix_hi(w, j, key_hi);
    }
    const uint t = get_local_id(0);
    lo[t] = s_lo;
    hi[t] = s_hi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = KEVO_CHECKSUM_GROUP / 2; s > 0; s >>= 1) {
        if (t < s) {
            lo[t] += lo[t + s];
            hi[t] += hi[t + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) {
        atomic_add(&sums[2 * slot], lo[0]);
        atomic_add(&sums[2 * slot + 1], hi[0]);
    }
}
