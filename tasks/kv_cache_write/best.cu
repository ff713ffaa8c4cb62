// kv_cache_write best-known CUDA kernel: one block row per token, the slot read once, 16-byte copies
// (uint4 = eight bf16) of key and value in a stride loop over the row, streaming stores (__stcs: the
// cache lines are not read again by this kernel); a slot of -1 writes nothing. row (Hkv * d) is a
// multiple of 64 and buffers are 16-byte aligned.
// kevo: tune BX 128 64 256 32
// kevo: launch kv_cache_write block=BX,1 per_thread=8,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 128
#endif

extern "C" __global__ void kv_cache_write(const __nv_bfloat16* key, const __nv_bfloat16* value, __nv_bfloat16* key_cache, __nv_bfloat16* value_cache, const int* slot_mapping, unsigned row, unsigned tokens)
{
    const unsigned t = blockIdx.y;
    if (t >= tokens) return;
    const int slot = __ldg(slot_mapping + t);
    if (slot < 0) return;
    const unsigned vectors = row / 8;
    const uint4* src_k = reinterpret_cast<const uint4*>(key + (size_t)t * row);
    const uint4* src_v = reinterpret_cast<const uint4*>(value + (size_t)t * row);
    uint4* dst_k = reinterpret_cast<uint4*>(key_cache + (size_t)slot * row);
    uint4* dst_v = reinterpret_cast<uint4*>(value_cache + (size_t)slot * row);
    for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors; v += gridDim.x * blockDim.x) {
        __stcs(dst_k + v, __ldg(src_k + v));
        __stcs(dst_v + v, __ldg(src_v + v));
    }
}
