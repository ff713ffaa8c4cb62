// kv_cache_write_only_last_slot: right everywhere but at the last slot of the cache, which an
// off-by-one capacity guard skips. The first mapped token of every trial writes the last slot; this
// kernel must fail there.
// kevo: tune BX 128 64 256 512
// kevo: launch kv_cache_write block=BX,1
#ifndef BX
#define BX 128
#endif

__kernel void kv_cache_write(__global const ushort* key, __global const ushort* value, __global ushort* key_cache, __global ushort* value_cache, __global const int* slot_mapping, uint row, uint tokens)
{
    const uint i = (uint)get_global_id(0), t = (uint)get_global_id(1);
    if (i >= row || t >= tokens) return;
    const int slot = slot_mapping[t];
    if (slot < 0) return;
    // WRONG (only at the cache's last slot): a capacity guard one short, from the task's cache size
    // (16 (1 + ceil(3 T / 16)) slots).
    const uint capacity = 16u * (1u + (3u * tokens + 15u) / 16u);
    if ((uint)slot >= capacity - 1u) return;
    key_cache[(size_t)slot * row + i] = key[(size_t)t * row + i];
    value_cache[(size_t)slot * row + i] = value[(size_t)t * row + i];
}
