// Evicts the last-level cache between timed runs: reads and writes a buffer larger than the cache,
// one element per work-item (no loop, so CPU implementations such as PoCL vectorise it).
__kernel void kevo_flush(__global float* buffer, unsigned n) {
    const unsigned i = get_global_id(0);
    if (i < n) buffer[i] = buffer[i] * 0.5f + 1.0f;
}
