// fused_moe best-known OpenCL kernel (for PoCL and other CPUs/GPUs without tensor cores): the
// (token, choice) pairs are grouped by expert first (local-memory histogram, prefix and scatter in
// one work-group), so moe_gate_up reads each row of an expert's W13 once for up to TM tokens of that
// expert (the weights dominate the traffic at decode sizes), and moe_down does the same with W2,
// adding each pair's weighted result into accum. OpenCL 1.2 has no float atomics, so the adds are a
// compare-and-swap loop on the bits (accum starts at zero; the order of the adds does not matter to
// the fp32 accuracy the check asks for).
// kevo: launch moe_align block=256
// kevo: launch moe_gate_up block=64,1 per_thread=1,8
// kevo: launch moe_down block=64,1 per_thread=1,8
#define TM 8
#define MAX_EXPERTS 1024

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel void moe_align(__global const int* topk_ids, __global int* expert_offsets, __global int* sorted_pairs, uint pairs, uint experts)
{
    __local int count[MAX_EXPERTS];
    __local int cursor[MAX_EXPERTS];
    if (get_group_id(0) != 0) return;
    const uint lid = (uint)get_local_id(0), n = (uint)get_local_size(0);
    for (uint e = lid; e < experts; e += n) count[e] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint p = lid; p < pairs; p += n) atomic_inc(&count[topk_ids[p]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int total = 0;
        for (uint e = 0; e < experts; ++e) {
            expert_offsets[e] = total;
            cursor[e] = total;
            total += count[e];
        }
        expert_offsets[experts] = total;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint p = lid; p < pairs; p += n) sorted_pairs[atomic_inc(&cursor[topk_ids[p]])] = (int)p;
}

// The tile-th group of TM sorted positions that lie in one expert: its expert and first position.
// Tiles are numbered expert by expert; returns 0 past the last tile.
int find_tile(__global const int* offsets, uint experts, uint tile, uint* expert, int* first, int* end)
{
    uint seen = 0;
    for (uint e = 0; e < experts; ++e) {
        const int begin = offsets[e], stop = offsets[e + 1];
        const uint tiles = (uint)(stop - begin + TM - 1) / TM;
        if (tile < seen + tiles) {
            *expert = e;
            *first = begin + (int)(tile - seen) * TM;
            *end = min(stop, *first + TM);
            return 1;
        }
        seen += tiles;
    }
    return 0;
}

__kernel void moe_gate_up(__global const ushort* x, __global const ushort* w13, __global const int* topk_ids, __global const int* expert_offsets, __global const int* sorted_pairs, __global ushort* act, uint tokens, uint topk, uint experts, uint hidden, uint inter)
{
    const uint i = (uint)get_global_id(0);
    if (i >= inter) return;
    for (uint tile = (uint)get_global_id(1);; tile += (uint)get_global_size(1)) {
        uint e;
        int first, end;
        if (!find_tile(expert_offsets, experts, tile, &e, &first, &end)) return;
        uint pair[TM];
        float g[TM], u[TM];
        const int rows = end - first;
        for (int r = 0; r < TM; ++r) {
            pair[r] = r < rows ? (uint)sorted_pairs[first + r] : 0u;
            g[r] = 0.0f;
            u[r] = 0.0f;
        }
        __global const ushort* wg = w13 + ((size_t)e * 2 * inter + i) * hidden;
        __global const ushort* wu = wg + (size_t)inter * hidden;
        for (uint h = 0; h < hidden; ++h) {
            const float a = bf16_to_float(wg[h]), b = bf16_to_float(wu[h]);
            for (int r = 0; r < TM; ++r) {
                if (r >= rows) break;
                const float xv = bf16_to_float(x[(size_t)(pair[r] / topk) * hidden + h]);
                g[r] += a * xv;
                u[r] += b * xv;
            }
        }
        for (int r = 0; r < rows; ++r) act[(size_t)pair[r] * inter + i] = float_to_bf16(g[r] / (1.0f + exp(-g[r])) * u[r]);
    }
}

void add_float(__global float* address, float value)
{
    __global volatile uint* bits = (__global volatile uint*)address;
    uint old = *bits, assumed;
    do {
        assumed = old;
        old = atomic_cmpxchg(bits, assumed, as_uint(as_float(assumed) + value));
    } while (old != assumed);
}

__kernel void moe_down(__global const ushort* act, __global const ushort* w2, __global const int* topk_ids, __global const float* topk_weights, __global const int* expert_offsets, __global const int* sorted_pairs, __global float* accum, uint tokens, uint topk, uint experts, uint hidden, uint inter)
{
    const uint h = (uint)get_global_id(0);
    if (h >= hidden) return;
    for (uint tile = (uint)get_global_id(1);; tile += (uint)get_global_size(1)) {
        uint e;
        int first, end;
        if (!find_tile(expert_offsets, experts, tile, &e, &first, &end)) return;
        uint pair[TM];
        float y[TM];
        const int rows = end - first;
        for (int r = 0; r < TM; ++r) {
            pair[r] = r < rows ? (uint)sorted_pairs[first + r] : 0u;
            y[r] = 0.0f;
        }
        __global const ushort* row = w2 + ((size_t)e * hidden + h) * inter;
        for (uint i = 0; i < inter; ++i) {
            const float w = bf16_to_float(row[i]);
            for (int r = 0; r < TM; ++r) {
                if (r >= rows) break;
                y[r] += w * bf16_to_float(act[(size_t)pair[r] * inter + i]);
            }
        }
        for (int r = 0; r < rows; ++r) add_float(accum + (size_t)(pair[r] / topk) * hidden + h, topk_weights[pair[r]] * y[r]);
    }
}

__kernel void moe_finalize(__global const float* accum, __global ushort* out, uint count)
{
    const uint n = (uint)get_global_id(0);
    if (n < count) out[n] = float_to_bf16(accum[n]);
}
