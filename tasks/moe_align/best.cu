// moe_align, faster CUDA. Gating: one warp per token (WPB tokens a block), the row held in registers
// as lane + 32 i (coalesced loads), k rounds of a butterfly argmax over the warp (the lower expert
// index wins equal scores, as vLLM's topkGatingSoftmax); topk_softmax chooses on the logits (the
// softmax is monotonic in them) and needs the row's exponential sum only when not renormalising.
// grouped_topk merges each group's top two across the warp with shuffles, keeps the topk_group best
// groups in every lane, then runs the k rounds over the kept groups' biased scores; lane j writes
// slot j. moe_align_count is one block of 1024 threads: a shared-memory histogram, a block scan of
// the padded counts, expert_ids by a binary search of each block's row among the offsets, and the
// sentinel only where no pair will land (each expert's padding rows and the rows past the used
// ones). moe_align_scatter: each block counts its PT x 256 pairs per expert in shared memory,
// reserves one run of rows per expert with a single global atomicAdd, and places its pairs in it.
// kevo: tune WPB 4 8 2
// kevo: tune PT 4 8 2
// kevo: launch topk_softmax block=32,WPB
// kevo: launch grouped_topk block=32,WPB
// kevo: launch moe_align_count block=1024
// kevo: launch moe_align_scatter block=256 per_thread=PT
#ifndef WPB
#define WPB 4
#endif
#ifndef PT
#define PT 4
#endif
#define MAXV 32  // experts <= 1024: 32 values a lane
#define MAX_GROUPS 16
#define MAX_EXPERTS 1024
#define FULL 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)  // -inf (NVRTC has no math.h)

// The larger (value, lower index) of the warp, in every lane.
__device__ __forceinline__ void warp_argmax(float& v, int& i)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(FULL, v, o);
        const int oi = __shfl_xor_sync(FULL, i, o);
        if (ov > v || (ov == v && oi < i)) v = ov, i = oi;
    }
}

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    return v;
}

__device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}

// k rounds of the warp argmax over the lane's values v (only where `live` has the bit); lane j ends
// with slot j's expert and value.
__device__ __forceinline__ void warp_topk(const float (&v)[MAXV], unsigned live, unsigned lane, unsigned topk, int& out_id, float& out_v)
{
    out_id = -1, out_v = 0.0f;
    for (unsigned j = 0; j < topk; ++j) {
        float bv = NEG_INF;
        int bi = 0x7fffffff;
#pragma unroll
        for (int i = 0; i < MAXV; ++i)
            if ((live >> i & 1u) && (bi == 0x7fffffff || v[i] > bv)) bv = v[i], bi = (int)lane + 32 * i;
        warp_argmax(bv, bi);
        if (lane == j) out_id = bi, out_v = bv;
        if ((unsigned)(bi & 31) == lane) live &= ~(1u << (bi >> 5));
    }
}

extern "C" __global__ void __launch_bounds__(32 * WPB) topk_softmax(const float* gating_output, float* topk_weights, int* topk_ids, unsigned tokens, unsigned experts, unsigned topk, unsigned renormalize)
{
    const unsigned lane = threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    if (t >= tokens) return;  // the whole warp
    const float* l = gating_output + (size_t)t * experts;
    float v[MAXV];
    unsigned live = 0;
    float m = NEG_INF;
#pragma unroll
    for (int i = 0; i < MAXV; ++i) {
        const unsigned e = lane + 32u * i;
        v[i] = NEG_INF;
        if (32u * i < experts && e < experts) {
            v[i] = __ldg(l + e);
            live |= 1u << i;
            m = fmaxf(m, v[i]);
        }
    }
    m = warp_max(m);
    float sum = 0.0f;
    if (!renormalize) {
#pragma unroll
        for (int i = 0; i < MAXV; ++i)
            if (live >> i & 1u) sum += expf(v[i] - m);
        sum = warp_sum(sum);
    }
    int id;
    float value;
    warp_topk(v, live, lane, topk, id, value);
    const float p = lane < topk ? expf(value - m) : 0.0f;
    const float denom = renormalize ? warp_sum(p) : sum;
    if (lane < topk) {
        topk_ids[(size_t)t * topk + lane] = id;
        topk_weights[(size_t)t * topk + lane] = p / denom;
    }
}

extern "C" __global__ void __launch_bounds__(32 * WPB) grouped_topk(const float* gating_output, const float* correction_bias, float* topk_weights, int* topk_ids, unsigned tokens, unsigned experts, unsigned topk, unsigned n_group, unsigned topk_group, unsigned renormalize, float routed_scaling_factor)
{
    const unsigned lane = threadIdx.x, t = blockIdx.y * blockDim.y + threadIdx.y;
    if (t >= tokens) return;
    const float* l = gating_output + (size_t)t * experts;
    const unsigned size = experts / n_group;
    float v[MAXV];
    int grp[MAXV];
    unsigned live = 0;
#pragma unroll
    for (int i = 0; i < MAXV; ++i) {
        const unsigned e = lane + 32u * i;
        v[i] = NEG_INF;
        grp[i] = -1;
        if (32u * i < experts && e < experts) {
            v[i] = 1.0f / (1.0f + expf(-__ldg(l + e))) + __ldg(correction_bias + e);
            grp[i] = (int)(e / size);
            live |= 1u << i;
        }
    }
    // Each group's top-2 sum, merged across the warp; every lane keeps all of them.
    float score[MAX_GROUPS];
#pragma unroll
    for (int g = 0; g < MAX_GROUPS; ++g) {
        score[g] = NEG_INF;
        if ((unsigned)g >= n_group) continue;
        float a = NEG_INF, b = NEG_INF;
#pragma unroll
        for (int i = 0; i < MAXV; ++i)
            if (grp[i] == g) {
                b = fmaxf(b, fminf(a, v[i]));
                a = fmaxf(a, v[i]);
            }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float oa = __shfl_xor_sync(FULL, a, o), ob = __shfl_xor_sync(FULL, b, o);
            b = fmaxf(fminf(a, oa), fmaxf(b, ob));
            a = fmaxf(a, oa);
        }
        score[g] = a + b;
    }
    unsigned kept = 0;
    for (unsigned j = 0; j < topk_group; ++j) {
        int best = -1;
        float bs = NEG_INF;
#pragma unroll
        for (int g = 0; g < MAX_GROUPS; ++g)
            if ((unsigned)g < n_group && !(kept >> g & 1u) && (best < 0 || score[g] > bs)) best = g, bs = score[g];
        kept |= 1u << best;
    }
#pragma unroll
    for (int i = 0; i < MAXV; ++i)
        if ((live >> i & 1u) && !(kept >> grp[i] & 1u)) live &= ~(1u << i);
    int id;
    float value;
    warp_topk(v, live, lane, topk, id, value);
    const float w = lane < topk ? 1.0f / (1.0f + expf(-__ldg(l + id))) : 0.0f;
    const float factor = renormalize ? routed_scaling_factor / warp_sum(w) : routed_scaling_factor;
    if (lane < topk) {
        topk_ids[(size_t)t * topk + lane] = id;
        topk_weights[(size_t)t * topk + lane] = w * factor;
    }
}

extern "C" __global__ void __launch_bounds__(1024) moe_align_count(const int* topk_ids, int* sorted_token_ids, int* expert_ids, int* num_tokens_post_padded, int* cumsum, unsigned pairs, unsigned experts, unsigned block_size, unsigned capacity)
{
    __shared__ int count[MAX_EXPERTS];
    __shared__ int offset[MAX_EXPERTS + 1];
    __shared__ int warp_total[32];
    const unsigned tid = threadIdx.x, n = blockDim.x, lane = tid & 31u, warp = tid >> 5;
    const int bs = (int)block_size;
    for (unsigned e = tid; e < experts; e += n) count[e] = 0;
    __syncthreads();
    for (unsigned p = tid; p < pairs; p += n) atomicAdd(&count[__ldg(topk_ids + p)], 1);
    __syncthreads();
    // Each thread a run of `per` consecutive experts: its padded total, then a block scan.
    const unsigned per = (experts + n - 1) / n, lo = tid * per, hi = min(lo + per, experts);
    int mine = 0;
    for (unsigned e = lo; e < hi; ++e) mine += (count[e] + bs - 1) / bs * bs;
    int incl = mine;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int up = __shfl_up_sync(FULL, incl, o);
        if ((int)lane >= o) incl += up;
    }
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        int w = lane < (n + 31) / 32 ? warp_total[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int up = __shfl_up_sync(FULL, w, o);
            if ((int)lane >= o) w += up;
        }
        warp_total[lane] = w;  // inclusive over warps
    }
    __syncthreads();
    int run = incl - mine + (warp ? warp_total[warp - 1] : 0);
    for (unsigned e = lo; e < hi; ++e) {
        offset[e] = run;
        run += (count[e] + bs - 1) / bs * bs;
    }
    if (tid == n - 1) offset[experts] = warp_total[(n - 1) / 32];
    __syncthreads();
    const int total = offset[experts];
    if (tid == 0) num_tokens_post_padded[0] = total;
    for (unsigned e = tid; e <= experts; e += n) cumsum[e] = offset[e];
    // expert_ids: the expert whose range holds the block's first row (binary search); 0 past them.
    const unsigned blocks = (capacity + block_size - 1) / block_size, used = (unsigned)total / block_size;
    for (unsigned b = tid; b < blocks; b += n) {
        int owner = 0;
        if (b < used) {
            const int row = (int)(b * block_size);
            unsigned a = 0, z = experts;  // the last e with offset[e] <= row and a non-empty range
            while (z - a > 1) {
                const unsigned mid = (a + z) / 2;
                if (offset[mid] <= row) a = mid;
                else z = mid;
            }
            owner = (int)a;
        }
        expert_ids[b] = owner;
    }
    for (unsigned e = tid; e < experts; e += n)
        for (int r = offset[e] + count[e]; r < offset[e + 1]; ++r) sorted_token_ids[r] = (int)pairs;
    for (unsigned r = (unsigned)total + tid; r < capacity; r += n) sorted_token_ids[r] = (int)pairs;
}

extern "C" __global__ void __launch_bounds__(256) moe_align_scatter(const int* topk_ids, int* sorted_token_ids, int* cumsum, unsigned pairs, unsigned experts)
{
    __shared__ int count[MAX_EXPERTS];
    __shared__ int base[MAX_EXPERTS];
    const unsigned tid = threadIdx.x, n = blockDim.x;
    const unsigned first = blockIdx.x * n * PT;
    for (unsigned e = tid; e < experts; e += n) count[e] = 0;
    __syncthreads();
    int ex[PT], rank[PT];
#pragma unroll
    for (int i = 0; i < PT; ++i) {
        const unsigned p = first + i * n + tid;
        ex[i] = -1;
        if (p < pairs) {
            const int e = __ldg(topk_ids + p);
            if (e >= 0 && (unsigned)e < experts) {
                ex[i] = e;
                rank[i] = atomicAdd(&count[e], 1);
            }
        }
    }
    __syncthreads();
    for (unsigned e = tid; e < experts; e += n)
        if (count[e]) base[e] = atomicAdd(&cumsum[e], count[e]);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < PT; ++i)
        if (ex[i] >= 0) sorted_token_ids[base[ex[i]] + rank[i]] = (int)(first + i * n + tid);
}
