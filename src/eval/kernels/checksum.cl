// Keyed, order-independent 64-bit checksum of a byte region of a buffer (see device_checksum.hpp,
// which has the host twin): word j of the region (4 bytes, little-endian, the last one zero-padded)
// adds mix_lo(w, j) and mix_hi(w, j) to two 32-bit sums. Each mix is a bijection of w for a fixed j,
// so a change to any single word always changes both sums. OpenCL 1.2: 32-bit atomics on global
// memory only, one pair per work-group after a local reduction.
// Each work-group sums one tile of GROUP * WORDS consecutive words, its work-items striding by the
// group size: coalesced on a GPU, and on a CPU (PoCL runs each work-item's loop in turn) the tile
// stays in the cache. kevo_checksum_words reads whole aligned words and nothing else, so that a CPU
// implementation can vectorise it; kevo_checksum_bytes assembles words byte by byte, for regions
// that do not start on a word and for a region's last, partial word. The work-group size must be
// KEVO_CHECKSUM_GROUP; the host launches one group per tile.
#define KEVO_CHECKSUM_GROUP 256
#define KEVO_CHECKSUM_WORDS 32

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

ulong kevo_u64(uint lo, uint hi) { return ((ulong)hi << 32) | lo; }

// Adds the work-group's partial sums to sums[2 * slot] and sums[2 * slot + 1].
void kevo_add_group(__local uint* lo, __local uint* hi, uint s_lo, uint s_hi, __global uint* sums, uint slot) {
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

__kernel void kevo_checksum_words(__global const uint* words, uint first_lo, uint first_hi, uint count_lo,
                                  uint count_hi, uint key_lo, uint key_hi, __global uint* sums, uint slot) {
    __local uint lo[KEVO_CHECKSUM_GROUP];
    __local uint hi[KEVO_CHECKSUM_GROUP];
    const ulong first = kevo_u64(first_lo, first_hi), count = kevo_u64(count_lo, count_hi);
    const ulong tile = (ulong)get_group_id(0) * (KEVO_CHECKSUM_GROUP * KEVO_CHECKSUM_WORDS);
    uint s_lo = 0, s_hi = 0;
    for (uint k = 0; k < KEVO_CHECKSUM_WORDS; ++k) {
        const ulong j = tile + (ulong)k * KEVO_CHECKSUM_GROUP + get_local_id(0);
        const uint w = j < count ? words[first + j] : 0;
        s_lo += j < count ? kevo_mix_lo(w, j, key_lo) : 0;
        s_hi += j < count ? kevo_mix_hi(w, j, key_hi) : 0;
    }
    kevo_add_group(lo, hi, s_lo, s_hi, sums, slot);
}

// Words `start` .. ceil(size / 4)-1 of the region of `size` bytes at byte `offset` of the buffer.
__kernel void kevo_checksum_bytes(__global const uchar* bytes, uint offset_lo, uint offset_hi, uint size_lo,
                                  uint size_hi, uint start_lo, uint start_hi, uint key_lo, uint key_hi,
                                  __global uint* sums, uint slot) {
    __local uint lo[KEVO_CHECKSUM_GROUP];
    __local uint hi[KEVO_CHECKSUM_GROUP];
    const ulong offset = kevo_u64(offset_lo, offset_hi), size = kevo_u64(size_lo, size_hi);
    const ulong start = kevo_u64(start_lo, start_hi), count = (size + 3) / 4;
    const ulong tile = start + (ulong)get_group_id(0) * (KEVO_CHECKSUM_GROUP * KEVO_CHECKSUM_WORDS);
    uint s_lo = 0, s_hi = 0;
    for (uint k = 0; k < KEVO_CHECKSUM_WORDS; ++k) {
        const ulong j = tile + (ulong)k * KEVO_CHECKSUM_GROUP + get_local_id(0);
        if (j >= count) continue;
        uint w = 0;
        for (uint b = 0; b < 4; ++b)
            if (4 * j + b < size) w |= (uint)bytes[offset + 4 * j + b] << (8 * b);
        s_lo += kevo_mix_lo(w, j, key_lo);
        s_hi += kevo_mix_hi(w, j, key_hi);
    }
    kevo_add_group(lo, hi, s_lo, s_hi, sums, slot);
}
