// kv_cache_write_only_padding_mid: right for a batch whose padding is a tail, wrong where a padding
// token sits among mapped ones: it takes the first -1 as the end of the batch. Token T/2 is padding
// in every trial, with mapped tokens after it; this kernel must fail.
// kevo: tune BX 128 64 256 512
// kevo: launch kv_cache_write block=BX,1
#ifndef BX
#define BX 128
#endif

__kernel void kv_cache_write(__global const ushort* key, __global const ushort* value, __global ushort* key_cache, __global ushort* value_cache, __global const int* slot_mapping, uint row, uint tokens)
{
    const uint i = (uint)get_global_id(0), t = (uint)get_global_id(1);
    if (i >= row || t >= tokens) return;
    // WRONG (only where padding is not a tail): -1 taken as the end of the batch, so a token after a
    // padding token writes nothing.
    for (uint u = 0; u <= t; ++u)
        if (slot_mapping[u] < 0) return;
    const int slot = slot_mapping[t];
    key_cache[(size_t)slot * row + i] = key[(size_t)t * row + i];
    value_cache[(size_t)slot * row + i] = value[(size_t)t * row + i];
}
