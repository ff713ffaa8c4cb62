// qk_norm_rope_kv best-known CUDA kernel: one warp per head of one token (BX / 32 heads a block, one
// block row per token), head_dim = 128. Lane l holds the rotation pairs (2l, 64 + 2l) and
// (2l + 1, 65 + 2l) through two 4-byte bf16x2 loads, so rope needs no exchange; the sum of squares is
// a warp shuffle reduction in fp32 and the normed values stay in fp32 into the rotation (cos/sin as
// float2 loads of the fp32 cache row). v heads are 8-byte copies; cache stores are streaming
// (__stcs: this kernel does not read them again). A padding token (slot -1) writes only its q.
// kevo: tune BX 128 64 256 512
// kevo: launch qk_norm_rope_kv block=BX,1 per_thread=4,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 128
#endif
#define HEAD_DIM 128

extern "C" __global__ void qk_norm_rope_kv(const __nv_bfloat16* qkv, const __nv_bfloat16* q_weight, const __nv_bfloat16* k_weight, const int* positions, const float* cos_sin_cache, const int* slot_mapping, __nv_bfloat16* q_out, __nv_bfloat16* key_cache, __nv_bfloat16* value_cache, unsigned head_dim, unsigned q_heads, unsigned kv_heads, unsigned tokens, float eps)
{
    const unsigned t = blockIdx.y, lane = threadIdx.x % 32;
    const unsigned head = blockIdx.x * (BX / 32) + threadIdx.x / 32, heads = q_heads + 2 * kv_heads;
    if (t >= tokens || head >= heads) return;  // uniform over the warp
    const bool is_q = head < q_heads;
    const int slot = is_q ? 0 : __ldg(slot_mapping + t);
    if (slot < 0) return;  // a padding token's k and v
    const __nv_bfloat16* x = qkv + ((size_t)t * heads + head) * HEAD_DIM;
    const size_t cache_row = (size_t)slot * kv_heads * HEAD_DIM;
    if (head >= q_heads + kv_heads) {  // v: 256 bytes, 8 a lane
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(x) + lane);
        __stcs(reinterpret_cast<uint2*>(value_cache + cache_row + (head - q_heads - kv_heads) * HEAD_DIM) + lane, v);
        return;
    }
    const float2 a = __bfloat1622float2(__ldg(reinterpret_cast<const __nv_bfloat162*>(x) + lane));
    const float2 b = __bfloat1622float2(__ldg(reinterpret_cast<const __nv_bfloat162*>(x + HEAD_DIM / 2) + lane));
    float sum = a.x * a.x + a.y * a.y + b.x * b.x + b.y * b.y;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    const float inv_rms = rsqrtf(sum * (1.0f / HEAD_DIM) + eps);
    const __nv_bfloat16* w = is_q ? q_weight : k_weight;
    const float2 wa = __bfloat1622float2(__ldg(reinterpret_cast<const __nv_bfloat162*>(w) + lane));
    const float2 wb = __bfloat1622float2(__ldg(reinterpret_cast<const __nv_bfloat162*>(w + HEAD_DIM / 2) + lane));
    const float* cs = cos_sin_cache + (size_t)__ldg(positions + t) * HEAD_DIM;
    const float2 c = __ldg(reinterpret_cast<const float2*>(cs) + lane);
    const float2 s = __ldg(reinterpret_cast<const float2*>(cs + HEAD_DIM / 2) + lane);
    const float n1x = a.x * inv_rms * wa.x, n1y = a.y * inv_rms * wa.y;
    const float n2x = b.x * inv_rms * wb.x, n2y = b.y * inv_rms * wb.y;
    const __nv_bfloat162 lo = __floats2bfloat162_rn(n1x * c.x - n2x * s.x, n1y * c.y - n2y * s.y);
    const __nv_bfloat162 hi = __floats2bfloat162_rn(n2x * c.x + n1x * s.x, n2y * c.y + n1y * s.y);
    __nv_bfloat16* out = is_q ? q_out + ((size_t)t * q_heads + head) * HEAD_DIM
                              : key_cache + cache_row + (head - q_heads) * HEAD_DIM;
    __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(out);
    if (is_q) {
        o[lane] = lo;
        o[HEAD_DIM / 4 + lane] = hi;
    } else {
        __stcs(reinterpret_cast<unsigned*>(o) + lane, *reinterpret_cast<const unsigned*>(&lo));
        __stcs(reinterpret_cast<unsigned*>(o) + HEAD_DIM / 4 + lane, *reinterpret_cast<const unsigned*>(&hi));
    }
}
