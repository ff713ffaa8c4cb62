// topk_sampling best-known OpenCL kernel: the radix select of best.cu for CPUs and GPUs without
// warp shuffles: one 256-item work-group per row, the threshold from the order-preserving 32-bit
// key of each float in three digits (12 + 12 + 8 bits) with local-memory histograms, so the row is
// read four times (max and first histogram; second; third; the write) instead of once per
// distinct value. The sum of the kept exponentials is gathered in passes 2 and 3 (per-bin sums;
// local float adds are a compare-and-swap loop, OpenCL 1.2 having no float atomics). A bin is
// chosen by every work-item walking the histogram itself (cheap on a CPU). -inf is never kept, and a row
// with fewer than k finite values keeps them all.
// kevo: launch topk_sampling block=256,1
#define THREADS 256
#define BINS 4096

uint order_key(float f)
{
    const uint u = as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

int is_finite_value(float f) { return (as_uint(f) & 0x7f800000u) != 0x7f800000u; }

void local_add(__local volatile float* address, float value)
{
    __local volatile uint* bits = (__local volatile uint*)address;
    uint old = *bits, assumed;
    do {
        assumed = old;
        old = atomic_cmpxchg(bits, assumed, as_uint(as_float(assumed) + value));
    } while (old != assumed);
}

float group_reduce(float v, int take_max, __local float* scratch)
{
    const uint lid = (uint)get_local_id(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = (uint)get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] = take_max ? fmax(scratch[lid], scratch[lid + s]) : scratch[lid] + scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

// The bin holding the rank-th largest key (rank >= 1) and the rank inside it. Every work-item walks
// the histogram itself (cheap on a CPU, and no hand-over through local memory).
void select_bin(__local const uint* hist, uint bins, uint rank, uint* bin, uint* rank_in_bin)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    uint above = 0;
    *bin = 0;
    *rank_in_bin = 1;
    for (int b = (int)bins - 1; b >= 0; --b) {
        const uint c = hist[b];
        if (rank <= above + c) {
            *bin = (uint)b;
            *rank_in_bin = rank - above;
            break;
        }
        above += c;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

__kernel void topk_sampling(__global const float* logits, __global float* probs, uint vocab, uint rows, uint k, float temperature)
{
    __local uint hist[BINS];
    __local float bin_sum[BINS];
    __local float red[THREADS];
    const uint r = (uint)get_group_id(1), lid = (uint)get_local_id(0), n = (uint)get_local_size(0);
    if (r >= rows) return;
    __global const float* row = logits + (size_t)r * vocab;
    __global float* out = probs + (size_t)r * vocab;

    // Pass 1: the maximum and the histogram of the top 12 key bits of the finite values.
    for (uint b = lid; b < BINS; b += n) hist[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    float mx = -INFINITY, finite = 0.0f;
    for (uint v = lid; v < vocab; v += n) {
        const float l = row[v];
        if (is_finite_value(l)) {
            atomic_inc(&hist[order_key(l) >> 20]);
            mx = fmax(mx, l);
            finite += 1.0f;
        }
    }
    mx = group_reduce(mx, 1, red);
    const uint total = (uint)group_reduce(finite, 0, red);
    if (total == 0) {
        for (uint v = lid; v < vocab; v += n) out[v] = 0.0f;
        return;
    }
    uint b1, rank2, b2, rank3, b3, rank_unused;
    select_bin(hist, BINS, min(k, total), &b1, &rank2);

    // Pass 2: inside the first digit, the next 12 bits and their exp sums; above it, the sum.
    for (uint b = lid; b < BINS; b += n) {
        hist[b] = 0u;
        bin_sum[b] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float above = 0.0f;
    for (uint v = lid; v < vocab; v += n) {
        const float l = row[v];
        if (!is_finite_value(l)) continue;
        const uint key = order_key(l), d1 = key >> 20;
        if (d1 < b1) continue;
        const float e = exp((l - mx) / temperature);
        if (d1 > b1) {
            above += e;
        } else {
            atomic_inc(&hist[(key >> 8) & 0xfffu]);
            local_add(&bin_sum[(key >> 8) & 0xfffu], e);
        }
    }
    select_bin(hist, BINS, rank2, &b2, &rank3);
    for (uint b = b2 + 1 + lid; b < BINS; b += n) above += bin_sum[b];
    above = group_reduce(above, 0, red);

    // Pass 3: inside the first two digits, the last 8 bits.
    for (uint b = lid; b < 256; b += n) {
        hist[b] = 0u;
        bin_sum[b] = 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint prefix = (b1 << 12) | b2;
    for (uint v = lid; v < vocab; v += n) {
        const float l = row[v];
        if (!is_finite_value(l)) continue;
        const uint key = order_key(l);
        if ((key >> 8) != prefix) continue;
        atomic_inc(&hist[key & 0xffu]);
        local_add(&bin_sum[key & 0xffu], exp((l - mx) / temperature));
    }
    select_bin(hist, 256, rank3, &b3, &rank_unused);
    const uint tau_key = (prefix << 8) | b3;
    float tail = 0.0f;
    for (uint b = b3 + lid; b < 256; b += n) tail += bin_sum[b];
    const float sum = above + group_reduce(tail, 0, red);

    for (uint v = lid; v < vocab; v += n) {
        const float l = row[v];
        out[v] = is_finite_value(l) && order_key(l) >= tau_key ? exp((l - mx) / temperature) / sum : 0.0f;
    }
}
