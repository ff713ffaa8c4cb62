// kv_cache_write_slightly_wrong: ignores the -1 of padding tokens and clamps their slot to 0, as a
// kernel that "just guards the index" would. Slot 0 belongs to no token (block 0 is the null block),
// so its contents change where they must not.
// kevo: tune BX 128 64 256 512
// kevo: launch kv_cache_write block=BX,1
#ifndef BX
#define BX 128
#endif

__kernel void kv_cache_write(__global const ushort* key, __global const ushort* value, __global ushort* key_cache, __global ushort* value_cache, __global const int* slot_mapping, uint row, uint tokens)
{
    const uint i = (uint)get_global_id(0), t = (uint)get_global_id(1);
    if (i >= row || t >= tokens) return;
    const int slot = max(slot_mapping[t], 0);  // WRONG: a padding token writes slot 0
    key_cache[(size_t)slot * row + i] = key[(size_t)t * row + i];
    value_cache[(size_t)slot * row + i] = value[(size_t)t * row + i];
}
