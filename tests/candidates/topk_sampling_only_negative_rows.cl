// topk_sampling_only_negative_rows: right on rows whose maximum is positive, wrong where every logit
// is very negative: the maximum it subtracts is at least 0 (as if it started at 0, not -inf), so
// exp((l - 0) / T) underflows to 0 for every value of a row shifted by -300 and 0 / 0 is NaN. The
// outlier trial holds such rows in every size; this kernel must fail there.
// kevo: tune BX 256 128 64
// kevo: launch topk_sampling block=BX,1
#ifndef BX
#define BX 256
#endif

float group_max(float v, __local float* scratch)
{
    const uint lid = (uint)get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = (uint)get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

float group_sum(float v, __local float* scratch)
{
    const uint lid = (uint)get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = (uint)get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

__kernel void topk_sampling(__global const float* logits, __global float* probs, uint vocab, uint rows, uint k, float temperature)
{
    __local float scratch[BX];
    const uint r = (uint)get_group_id(1), lid = (uint)get_local_id(0), n = (uint)get_local_size(0);
    if (r >= rows) return;
    __global const float* row = logits + (size_t)r * vocab;
    __global float* out = probs + (size_t)r * vocab;
    float below = INFINITY, tau = INFINITY, m = -INFINITY;
    uint counted = 0;
    while (counted < k) {
        float best = -INFINITY;
        for (uint v = lid; v < vocab; v += n) {
            const float l = row[v];
            if (l < below && l > best) best = l;  // -inf and NaN never qualify
        }
        const float next = group_max(best, scratch);
        if (next == -INFINITY) break;  // fewer than k finite values: every finite one is kept
        float copies = 0.0f;
        for (uint v = lid; v < vocab; v += n) copies += row[v] == next ? 1.0f : 0.0f;
        counted += (uint)group_sum(copies, scratch);
        if (m == -INFINITY) m = fmax(next, 0.0f);  // WRONG (only for all-negative rows): a maximum of at least 0
        tau = below = next;
    }
    float part = 0.0f;
    for (uint v = lid; v < vocab; v += n) {
        const float l = row[v];
        if (l >= tau) part += exp((l - m) / temperature);
    }
    const float sum = group_sum(part, scratch);
    for (uint v = lid; v < vocab; v += n) {
        const float l = row[v];
        out[v] = l >= tau ? exp((l - m) / temperature) / sum : 0.0f;
    }
}
