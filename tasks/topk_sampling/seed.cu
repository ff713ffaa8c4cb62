// topk_sampling seed (naive on purpose): one block per row; the threshold by walking the row's
// distinct values downwards, one full pass over the row per distinct value (a block-wide max of
// the values below the last one, then a count of its copies) until k values are counted, then a
// pass for the sum of the kept exponentials and one that writes the probabilities.
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
    unsigned counted = 0;
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
        counted += (unsigned)block_sum(copies, scratch);
        if (m == -INFINITY) m = next;
        tau = below = next;
    }
    float part = 0.0f;
    for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) {
        const float l = row[v];
        if (l >= tau) part += expf((l - m) / temperature);
    }
    const float sum = block_sum(part, scratch);
    for (unsigned v = threadIdx.x; v < vocab; v += blockDim.x) {
        const float l = row[v];
        out[v] = l >= tau ? expf((l - m) / temperature) / sum : 0.0f;
    }
}
