# fused_moe seed in Triton (naive on purpose), four kernels as in the CUDA seed:
# - moe_align: a stable counting sort of the pairs by expert (scratch: this seed's other kernels do
#   not use it); its domain of 256 cells with block=1 is 256 programs, each of which places the
#   experts e = pid, pid + 256, ...: its start is the count of pairs with a smaller expert, and its
#   pairs go there in pair order (a running count plus a cumsum over tiles of ALIGN_BLOCK pairs).
# - moe_gate_up: a tile of BI act elements of one pair per program (axis 0: along inter, axis 1:
#   pairs), g and u accumulated in fp32 over hidden in BK-wide slices, silu(g) * u rounded once.
# - moe_down: a tile of BH columns of one token per program (axis 0: along hidden, axis 1: tokens),
#   each choice's dot product over inter (from the stored bf16 act) in fp32, times its weight,
#   summed over the k choices in fp32 into accum.
# - moe_finalize: out = bf16(accum), a tile of BF elements per program.
# block= is the tile one program covers; the threads are num_warps x 32.
# kevo: tune BI 64 32 128
# kevo: tune BK 64 32 128
# kevo: tune BH 64 32 128
# kevo: tune BKI 64 32 128
# kevo: tune BF 1024 256 512
# kevo: tune ALIGN_BLOCK 1024 256 512
# kevo: tune num_warps 4 2 8
# kevo: launch moe_align block=1
# kevo: launch moe_gate_up block=BI,1
# kevo: launch moe_down block=BH,1
# kevo: launch moe_finalize block=BF
import triton
import triton.language as tl


@triton.jit
def moe_align(topk_ids, expert_offsets, sorted_pairs, pairs, experts, ALIGN_BLOCK: tl.constexpr):
    n = pairs.to(tl.int32)  # pairs < 65536
    ne = experts.to(tl.int32)
    pid = tl.program_id(0)
    if pid == 0:
        tl.store(expert_offsets + ne, n)  # every id is in [0, experts): the last offset is all the pairs
    for e in range(pid, ne, tl.num_programs(0)):
        start = tl.zeros([ALIGN_BLOCK], dtype=tl.int32)
        for base in range(0, n, ALIGN_BLOCK):
            p = base + tl.arange(0, ALIGN_BLOCK)
            ids = tl.load(topk_ids + p, mask=p < n, other=ne)
            start += (ids < e).to(tl.int32)
        cursor = tl.sum(start, axis=0)
        tl.store(expert_offsets + e, cursor)
        for base in range(0, n, ALIGN_BLOCK):
            p = base + tl.arange(0, ALIGN_BLOCK)
            ids = tl.load(topk_ids + p, mask=p < n, other=ne)
            mine = (ids == e).to(tl.int32)
            tl.store(sorted_pairs + cursor + tl.cumsum(mine, axis=0) - 1, p, mask=mine != 0)  # stable
            cursor += tl.sum(mine, axis=0)


@triton.jit
def moe_gate_up(x, w13, topk_ids, expert_offsets, sorted_pairs, act, tokens, topk, experts, hidden, inter,
                BI: tl.constexpr, BK: tl.constexpr):
    p = tl.program_id(1).to(tl.int64)
    h_n = hidden.to(tl.int64)
    i_n = inter.to(tl.int64)
    i = tl.program_id(0).to(tl.int64) * BI + tl.arange(0, BI)
    live = p < tokens.to(tl.int64) * topk.to(tl.int64)
    rows = live & (i < i_n)  # the grid is rounded up to whole tiles
    t = p // topk.to(tl.int64)
    e = tl.load(topk_ids + p, mask=live, other=0).to(tl.int64)
    wg = w13 + (e * 2 * i_n + i) * h_n  # the expert's gate rows; its up rows are inter rows further
    wu = wg + i_n * h_n
    xr = x + t * h_n
    g_acc = tl.zeros([BI, BK], dtype=tl.float32)
    u_acc = tl.zeros([BI, BK], dtype=tl.float32)
    for start in range(0, h_n, BK):
        h = start + tl.arange(0, BK)
        cols = h < h_n
        xv = tl.load(xr + h, mask=cols & live, other=0.0).to(tl.float32)
        both = rows[:, None] & cols[None, :]
        g_acc += tl.load(wg[:, None] + h[None, :], mask=both, other=0.0).to(tl.float32) * xv[None, :]
        u_acc += tl.load(wu[:, None] + h[None, :], mask=both, other=0.0).to(tl.float32) * xv[None, :]
    g = tl.sum(g_acc, axis=1)
    u = tl.sum(u_acc, axis=1)
    # silu and the product in fp32, rounded once into act.
    tl.store(act + p * i_n + i, (g / (1.0 + tl.exp(-g)) * u).to(tl.bfloat16), mask=rows)


@triton.jit
def moe_down(act, w2, topk_ids, topk_weights, expert_offsets, sorted_pairs, accum, tokens, topk, experts, hidden,
             inter, BH: tl.constexpr, BKI: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    h_n = hidden.to(tl.int64)
    i_n = inter.to(tl.int64)
    k_n = topk.to(tl.int64)
    h = tl.program_id(0).to(tl.int64) * BH + tl.arange(0, BH)
    live = t < tokens.to(tl.int64)
    cols = live & (h < h_n)  # the grid is rounded up to whole tiles
    total = tl.zeros([BH], dtype=tl.float32)
    for j in range(0, k_n):
        p = t * k_n + j
        e = tl.load(topk_ids + p, mask=live, other=0).to(tl.int64)
        w = tl.load(topk_weights + p, mask=live, other=0.0)
        rows = w2 + (e * h_n + h) * i_n
        a = act + p * i_n
        y_acc = tl.zeros([BH, BKI], dtype=tl.float32)
        for start in range(0, i_n, BKI):
            i = start + tl.arange(0, BKI)
            inside = i < i_n
            av = tl.load(a + i, mask=inside & live, other=0.0).to(tl.float32)
            y_acc += tl.load(rows[:, None] + i[None, :], mask=cols[:, None] & inside[None, :],
                             other=0.0).to(tl.float32) * av[None, :]
        total += w * tl.sum(y_acc, axis=1)
    tl.store(accum + t * h_n + h, total, mask=cols)


@triton.jit
def moe_finalize(accum, out, count, BF: tl.constexpr):
    n = tl.program_id(0).to(tl.int64) * BF + tl.arange(0, BF)
    inside = n < count.to(tl.int64)
    tl.store(out + n, tl.load(accum + n, mask=inside).to(tl.bfloat16), mask=inside)
