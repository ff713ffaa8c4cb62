// Hostile kv_cache_write: it counts the threads it has run in a __device__ counter and writes only in
// its first launch (every later launch finds the count past the batch and returns). Correct when run
// once; a timed run, or a copy of the case in a replay, is left with the poison. (OpenCL 1.2 has no
// program-scope variable to count in, so this one is CUDA only.)
// kevo: launch kv_cache_write block=128,1
#include <cuda_bf16.h>

__device__ unsigned int seen = 0;

extern "C" __global__ void kv_cache_write(const __nv_bfloat16* key, const __nv_bfloat16* value, __nv_bfloat16* key_cache, __nv_bfloat16* value_cache, const int* slot_mapping, unsigned row, unsigned tokens)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= row || t >= tokens) return;
    if (atomicAdd(&seen, 1u) >= row * tokens) return;
    const int slot = slot_mapping[t];
    if (slot < 0) return;
    key_cache[(size_t)slot * row + i] = key[(size_t)t * row + i];
    value_cache[(size_t)slot * row + i] = value[(size_t)t * row + i];
}
