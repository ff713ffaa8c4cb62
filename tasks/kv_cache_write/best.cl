// kv_cache_write best-known OpenCL kernel: eight bf16 (16 bytes) per work-item as one uint4, key and
// value together; a slot of -1 writes nothing. row (Hkv * d) is a multiple of 64.
// kevo: tune BX 64 128 32 256
// kevo: launch kv_cache_write block=BX,1 per_thread=8,1
#ifndef BX
#define BX 64
#endif

__kernel void kv_cache_write(__global const ushort* key, __global const ushort* value, __global ushort* key_cache, __global ushort* value_cache, __global const int* slot_mapping, uint row, uint tokens)
{
    const uint v = (uint)get_global_id(0), t = (uint)get_global_id(1);
    const uint vectors = row / 8;
    if (v >= vectors || t >= tokens) return;
    const int slot = slot_mapping[t];
    if (slot < 0) return;
    __global const uint4* src_k = (__global const uint4*)(key + (size_t)t * row);
    __global const uint4* src_v = (__global const uint4*)(value + (size_t)t * row);
    ((__global uint4*)(key_cache + (size_t)slot * row))[v] = src_k[v];
    ((__global uint4*)(value_cache + (size_t)slot * row))[v] = src_v[v];
}
