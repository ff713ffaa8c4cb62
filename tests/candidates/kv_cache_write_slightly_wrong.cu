// kv_cache_write_slightly_wrong: ignores the -1 of padding tokens and clamps their slot to 0, as a
// kernel that "just guards the index" would. Slot 0 belongs to no token (block 0 is the null block),
// so its contents change where they must not.
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
    const int slot = max(slot_mapping[t], 0);  // WRONG: a padding token writes slot 0
    key_cache[(size_t)slot * row + i] = key[(size_t)t * row + i];
    value_cache[(size_t)slot * row + i] = value[(size_t)t * row + i];
}
