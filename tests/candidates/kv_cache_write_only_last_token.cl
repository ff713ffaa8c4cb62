// kv_cache_write_only_last_token: right everywhere but for the last token of the batch, which it
// never writes (a bound one short). The nominal trial maps the last token in every size; this kernel
// must fail there.
// kevo: tune BX 128 64 256 512
// kevo: launch kv_cache_write block=BX,1
#ifndef BX
#define BX 128
#endif

__kernel void kv_cache_write(__global const ushort* key, __global const ushort* value, __global ushort* key_cache, __global ushort* value_cache, __global const int* slot_mapping, uint row, uint tokens)
{
    const uint i = (uint)get_global_id(0), t = (uint)get_global_id(1);
    if (i >= row || t + 1 >= tokens) return;  // WRONG (only for the batch's last token): one token short
    const int slot = slot_mapping[t];
    if (slot < 0) return;
    key_cache[(size_t)slot * row + i] = key[(size_t)t * row + i];
    value_cache[(size_t)slot * row + i] = value[(size_t)t * row + i];
}
