// topk_sampling_slightly_wrong: the seed keeping exactly k values, the copies of the threshold value
// beyond the k-th dropped (ties broken by index), where the task keeps every value tied with it.
// kevo: tune BX 256 128 512 1024
// kevo: launch topk_sampling block=BX,1
#ifndef BX
#define BX 256
#endif
// No headers: infinity from its bits.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

__device__ float block_max(float v, float* scratch)
{
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
        __syncthreads();
    }
    const float r = scratch[0];
    __syncthreads();
    return r;
}

__device__ float block_sum(float v, float* scratch)
{
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
        __syncthreads();
    }
    const float r = scratch[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void topk_sampling(const float* logits, float* probs, unsigned vocab, unsigned rows, unsigned k, float temperature)
{
    __shared__ float scratch[BX];
    const unsigned r = blockIdx.y;
    if (r >= rows) return;
    const float* row = logits + (size_t)r * vocab;
    float* out = probs + (size_t)r * vocab;
    // Walk the distinct finite values from the top: next = the largest value below `below`.
    float below = INFINITY, tau = INFINITY, m = -INFINITY;
    unsigned counted = 0, last = 0;
    while (counted < k) {
        float best = -INFINITY;
        for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) {
            const float l = row[v];
            if (l < below && l > best) best = l;  // -inf and NaN never qualify
        }
        const float next = block_max(best, scratch);
        if (next == -INFINITY) break;  // fewer than k finite values: every finite one is kept
        float copies = 0.0f;
        for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) copies += row[v] == next ? 1.0f : 0.0f;
        last = (unsigned)block_sum(copies, scratch);
        counted += last;
        if (m == -INFINITY) m = next;
        tau = below = next;
    }
    float part = 0.0f;
    for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) {
        const float l = row[v];
        if (l > tau) part += expf((l - m) / temperature);
    }
    // WRONG: exactly k kept; the copies of the threshold beyond k are dropped (ties broken by index).
    const unsigned tied = counted > k ? last - (counted - k) : last;
    const float sum = block_sum(part, scratch) + (tau < INFINITY ? (float)tied * expf((tau - m) / temperature) : 0.0f);
    for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) {
        const float l = row[v];
        out[v] = l > tau ? expf((l - m) / temperature) / sum : 0.0f;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned kept = 0;
        for (unsigned v = 0; v < vocab; ++v)
            if (row[v] == tau && kept < tied) {
                out[v] = expf((tau - m) / temperature) / sum;
                ++kept;
            }
    }
}
