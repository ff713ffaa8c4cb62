// rope best-known CUDA kernel: one block row per token, the token's position read once, four
// rotation pairs per thread through 8-byte bf16 and 16-byte fp32 loads (d/2 is a multiple of 4),
// a stride loop over the token's (Hq + Hkv) d/2 pairs, neox layout, in place.
// kevo: tune BX 128 64 256 512
// kevo: launch rope block=BX,1 per_thread=4,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 128
#endif

__device__ __forceinline__ float4 load4(const __nv_bfloat16* p)
{
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v.x));
    const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&v.y));
    return make_float4(a.x, a.y, b.x, b.y);
}

__device__ __forceinline__ void store4(__nv_bfloat16* p, float4 f)
{
    uint2 v;
    *reinterpret_cast<__nv_bfloat162*>(&v.x) = __floats2bfloat162_rn(f.x, f.y);
    *reinterpret_cast<__nv_bfloat162*>(&v.y) = __floats2bfloat162_rn(f.z, f.w);
    *reinterpret_cast<uint2*>(p) = v;
}

extern "C" __global__ void rope(const int* positions, __nv_bfloat16* q, __nv_bfloat16* k, const float* cos_sin_cache, unsigned head_dim, unsigned q_heads, unsigned kv_heads, unsigned tokens)
{
    const unsigned t = blockIdx.y;
    if (t >= tokens) return;
    const unsigned half_dim = head_dim / 2, quads = (q_heads + kv_heads) * half_dim / 4;
    const float* cs = cos_sin_cache + (size_t)__ldg(positions + t) * head_dim;
    for (unsigned v = blockIdx.x * blockDim.x + threadIdx.x; v < quads; v += gridDim.x * blockDim.x) {
        const unsigned p = v * 4, head = p / half_dim, i = p % half_dim;
        __nv_bfloat16* row = head < q_heads ? q + ((size_t)t * q_heads + head) * head_dim
                                            : k + ((size_t)t * kv_heads + (head - q_heads)) * head_dim;
        const float4 c = __ldg(reinterpret_cast<const float4*>(cs + i));
        const float4 s = __ldg(reinterpret_cast<const float4*>(cs + half_dim + i));
        const float4 x1 = load4(row + i), x2 = load4(row + half_dim + i);
        store4(row + i, make_float4(x1.x * c.x - x2.x * s.x, x1.y * c.y - x2.y * s.y, x1.z * c.z - x2.z * s.z,
                                    x1.w * c.w - x2.w * s.w));
        store4(row + half_dim + i, make_float4(x2.x * c.x + x1.x * s.x, x2.y * c.y + x1.y * s.y, x2.z * c.z + x1.z * s.z,
                                           x2.w * c.w + x1.w * s.w));
    }
}
