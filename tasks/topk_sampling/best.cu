// topk_sampling best-known CUDA kernel: one 1024-thread block per row, the threshold by a radix
// select on the order-preserving 32-bit key of each float (12 + 12 + 8 bits) with the histograms
// in shared memory, so the row is read four times (max and first histogram; second histogram;
// third; the write) instead of once per distinct value. The sum of the kept exponentials is
// gathered along the way: pass 2 adds the values above the selected first digit and fills
// per-bin sums for the second digit, pass 3 does the same for the last digit, so no pass is spent
// on the sum. The re-reads of a row mostly hit L2. Rows are read and written as float4 when
// vocab is a multiple of 4 (rows are then 16-byte aligned). A bin is chosen by a block-wide scan
// (warp shuffles), not a serial walk over 4096 bins. Only finite values are counted: -inf is never
// kept, and a row with fewer than k finite values keeps them all.
// kevo: launch topk_sampling block=1024,1
// No headers: infinity from its bits.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#define THREADS 1024
#define BINS 4096

__device__ __forceinline__ unsigned order_key(float f)
{
    const unsigned u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ bool is_finite(float f) { return (__float_as_uint(f) & 0x7f800000u) != 0x7f800000u; }

// Calls f(l) for every logit of the row, in float4 loads where the row allows.
template <class F>
__device__ __forceinline__ void for_each_logit(const float* row, unsigned vocab, F f)
{
    if ((vocab & 3u) == 0) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (unsigned v = threadIdx.x; v < vocab / 4; v += blockDim.x) {
            const float4 q = __ldg(row4 + v);
            f(q.x), f(q.y), f(q.z), f(q.w);
        }
    } else {
        for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) f(__ldg(row + v));
    }
}

__device__ float block_reduce(float v, bool take_max, float* scratch)
{
    for (int o = 16; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = take_max ? fmaxf(v, w) : v + w;
    }
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? scratch[threadIdx.x] : (take_max ? -INFINITY : 0.0f);
        for (int o = 16; o > 0; o >>= 1) {
            const float w = __shfl_xor_sync(0xffffffffu, v, o);
            v = take_max ? fmaxf(v, w) : v + w;
        }
        if (threadIdx.x == 0) scratch[32] = v;
    }
    __syncthreads();
    const float r = scratch[32];
    __syncthreads();
    return r;
}

// Exclusive prefix over threads of `count` (thread 0 first), block-wide.
__device__ unsigned block_exclusive_scan(unsigned count, unsigned* scratch)
{
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned inclusive = count;
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned w = __shfl_up_sync(0xffffffffu, inclusive, o);
        if (lane >= (unsigned)o) inclusive += w;
    }
    if (lane == 31) scratch[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        unsigned s = lane < blockDim.x / 32 ? scratch[lane] : 0u;
        for (int o = 1; o < 32; o <<= 1) {
            const unsigned w = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= (unsigned)o) s += w;
        }
        scratch[32 + lane] = s;  // inclusive over warps
    }
    __syncthreads();
    const unsigned result = (warp ? scratch[32 + warp - 1] : 0u) + inclusive - count;
    __syncthreads();
    return result;
}

// The bin (counted from the top) holding the rank-th largest key (rank >= 1), among `bins` bins;
// returns it in sel[0] and the rank inside that bin in sel[1]. Thread t owns bins
// [bins - per (t + 1), bins - per t), the highest first.
__device__ void select_bin(const unsigned* hist, unsigned bins, unsigned rank, unsigned* scan_scratch, unsigned* sel)
{
    __syncthreads();  // the histogram's atomics are complete
    const unsigned per = (bins + blockDim.x - 1) / blockDim.x;
    const int top = (int)bins - 1 - (int)(per * threadIdx.x);
    unsigned mine = 0;
    for (unsigned q = 0; q < per; ++q)
        if (top - (int)q >= 0) mine += hist[top - (int)q];
    unsigned above = block_exclusive_scan(mine, scan_scratch);
    if (above < rank && rank <= above + mine) {
        for (unsigned q = 0; q < per; ++q) {
            const unsigned c = hist[top - (int)q];
            if (rank <= above + c) {
                sel[0] = (unsigned)(top - (int)q);
                sel[1] = rank - above;
                break;
            }
            above += c;
        }
    }
    __syncthreads();
}

extern "C" __global__ void topk_sampling(const float* logits, float* probs, unsigned vocab, unsigned rows, unsigned k, float temperature)
{
    __shared__ unsigned hist[BINS];
    __shared__ float bin_sum[BINS];
    __shared__ float red[33];
    __shared__ unsigned scan[64];
    __shared__ unsigned sel[2];
    const unsigned r = blockIdx.y;
    if (r >= rows) return;
    const float* row = logits + (size_t)r * vocab;
    float* out = probs + (size_t)r * vocab;

    // Pass 1: the maximum and the histogram of the top 12 key bits of the finite values.
    for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x) hist[b] = 0u;
    __syncthreads();
    float mx = -INFINITY;
    unsigned finite = 0;
    for_each_logit(row, vocab, [&](float l) {
        if (is_finite(l)) {
            atomicAdd(&hist[order_key(l) >> 20], 1u);
            mx = fmaxf(mx, l);
            ++finite;
        }
    });
    mx = block_reduce(mx, true, red);
    const unsigned total = (unsigned)block_reduce((float)finite, false, red);
    if (total == 0) {  // nothing finite: nothing kept
        for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) out[v] = 0.0f;
        return;
    }
    const unsigned rank1 = k < total ? k : total;
    select_bin(hist, BINS, rank1, scan, sel);
    const unsigned b1 = sel[0], rank2 = sel[1];
    __syncthreads();

    // Pass 2: inside the chosen first digit, the histogram of the next 12 bits and their exp sums;
    // the values above it are all kept and go straight into the sum.
    for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x) hist[b] = 0u, bin_sum[b] = 0.0f;
    __syncthreads();
    float above = 0.0f;
    for_each_logit(row, vocab, [&](float l) {
        if (!is_finite(l)) return;
        const unsigned key = order_key(l), d1 = key >> 20;
        if (d1 < b1) return;
        const float e = expf((l - mx) / temperature);
        if (d1 > b1) {
            above += e;
        } else {
            atomicAdd(&hist[(key >> 8) & 0xfffu], 1u);
            atomicAdd(&bin_sum[(key >> 8) & 0xfffu], e);
        }
    });
    select_bin(hist, BINS, rank2, scan, sel);
    const unsigned b2 = sel[0], rank3 = sel[1];
    for (unsigned b = threadIdx.x; b < BINS; b += blockDim.x)
        if (b > b2) above += bin_sum[b];
    above = block_reduce(above, false, red);

    // Pass 3: inside the first two digits, the last 8 bits.
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0u, bin_sum[b] = 0.0f;
    __syncthreads();
    const unsigned prefix = (b1 << 12) | b2;
    for_each_logit(row, vocab, [&](float l) {
        if (!is_finite(l)) return;
        const unsigned key = order_key(l);
        if ((key >> 8) != prefix) return;
        atomicAdd(&hist[key & 0xffu], 1u);
        atomicAdd(&bin_sum[key & 0xffu], expf((l - mx) / temperature));
    });
    __syncthreads();
    select_bin(hist, 256, rank3, scan, sel);
    const unsigned tau_key = (prefix << 8) | sel[0];
    float tail = 0.0f;
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
        if (b >= sel[0]) tail += bin_sum[b];
    const float sum = above + block_reduce(tail, false, red);

    // The write: every finite value at or above the threshold key, divided by the kept sum.
    if ((vocab & 3u) == 0) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        float4* out4 = reinterpret_cast<float4*>(out);
        for (unsigned v = threadIdx.x; v < vocab / 4; v += blockDim.x) {
            const float4 q = __ldg(row4 + v);
            float4 p;
            p.x = is_finite(q.x) && order_key(q.x) >= tau_key ? expf((q.x - mx) / temperature) / sum : 0.0f;
            p.y = is_finite(q.y) && order_key(q.y) >= tau_key ? expf((q.y - mx) / temperature) / sum : 0.0f;
            p.z = is_finite(q.z) && order_key(q.z) >= tau_key ? expf((q.z - mx) / temperature) / sum : 0.0f;
            p.w = is_finite(q.w) && order_key(q.w) >= tau_key ? expf((q.w - mx) / temperature) / sum : 0.0f;
            out4[v] = p;
        }
    } else {
        for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) {
            const float l = __ldg(row + v);
            out[v] = is_finite(l) && order_key(l) >= tau_key ? expf((l - mx) / temperature) / sum : 0.0f;
        }
    }
}
