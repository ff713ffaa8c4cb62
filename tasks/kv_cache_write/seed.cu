// kv_cache_write seed (naive on purpose): one element of one token's key and value rows per thread;
// a slot of -1 (a padding token) writes nothing. The data is copied as bits.
// kevo: tune BX 128 64 256 512
// kevo: launch kv_cache_write block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 128
#endif

extern "C" __global__ void kv_cache_write(const __nv_bfloat16* key, const __nv_bfloat16* value, __nv_bfloat16* key_cache, __nv_bfloat16* value_cache, const int* slot_mapping, unsigned row, unsigned tokens)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= row || t >= tokens) return;
    const int slot = slot_mapping[t];
    if (slot < 0) return;
    key_cache[(size_t)slot * row + i] = key[(size_t)t * row + i];
    value_cache[(size_t)slot * row + i] = value[(size_t)t * row + i];
}
