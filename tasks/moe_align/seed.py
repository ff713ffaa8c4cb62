# moe_align seeds in Triton (naive on purpose), four kernels as in the CUDA seed:
# - topk_softmax / grouped_topk: one program per token (the domain is 1 x tokens, block=1,1: the grid is
#   1 x tokens) holding the row in one tile of BE >= experts lanes; k rounds of tl.argmax (the lower
#   index wins ties: tie_break_left) with the chosen expert masked to -inf after each; grouped_topk
#   first scores each group (its two best biased scores) and keeps topk_group of them the same way.
# - moe_align_count: one program (domain 1, block=1): the counts by tl.histogram over tiles of BP
#   pairs, the padded offsets by a cumsum, expert_ids by counting the experts whose range ends at or
#   before each block's first row, and the sentinel over the whole buffer.
# - moe_align_scatter: BS pairs a program, each placed at a cursor taken with tl.atomic_add (each
#   expert's pairs land in no fixed order).
# block= is the tile one program covers; the threads are num_warps x 32.
# kevo: tune BS 1024 256 512
# kevo: tune num_warps 4 8 2
# kevo: tune BE 1024
# kevo: tune BK 16
# kevo: tune BG 16
# kevo: tune BP 1024
# kevo: tune BB 16
# kevo: launch topk_softmax block=1,1
# kevo: launch grouped_topk block=1,1
# kevo: launch moe_align_count block=1
# kevo: launch moe_align_scatter block=BS
import triton
import triton.language as tl


@triton.jit
def topk_softmax(gating_output, topk_weights, topk_ids, tokens, experts, topk, renormalize,
                 BE: tl.constexpr, BK: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    ne = experts.to(tl.int32)  # experts <= 1024 <= BE
    nk = topk.to(tl.int32)
    live = t < tokens.to(tl.int64)
    e = tl.arange(0, BE)
    cols = (e < ne) & live
    l = tl.load(gating_output + t * ne + e, mask=cols, other=float("-inf"))
    m = tl.max(l, axis=0)
    z = tl.where(cols, tl.exp(l - m), 0.0)
    total = tl.sum(z, axis=0)
    slot = tl.arange(0, BK)
    ids = tl.zeros([BK], dtype=tl.int32)
    w = tl.zeros([BK], dtype=tl.float32)
    cand = l
    for j in range(0, nk):
        best = tl.argmax(cand, axis=0, tie_break_left=True)  # on the logits: the softmax keeps their order
        pick = e == best
        ids = tl.where(slot == j, best, ids)
        w = tl.where(slot == j, tl.sum(tl.where(pick, z, 0.0), axis=0), w)
        cand = tl.where(pick, float("-inf"), cand)
    denom = tl.where(renormalize != 0, tl.sum(w, axis=0), total)
    out = (slot < nk) & live
    tl.store(topk_ids + t * nk + slot, ids, mask=out)
    tl.store(topk_weights + t * nk + slot, w / denom, mask=out)


@triton.jit
def grouped_topk(gating_output, correction_bias, topk_weights, topk_ids, tokens, experts, topk, n_group, topk_group,
                 renormalize, routed_scaling_factor, BE: tl.constexpr, BK: tl.constexpr, BG: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    ne = experts.to(tl.int32)
    nk = topk.to(tl.int32)
    ng = n_group.to(tl.int32)  # n_group <= 16 <= BG
    tg = topk_group.to(tl.int32)
    live = t < tokens.to(tl.int64)
    size = ne // ng
    e = tl.arange(0, BE)
    cols = (e < ne) & live
    l = tl.load(gating_output + t * ne + e, mask=cols, other=0.0)
    sig = 1.0 / (1.0 + tl.exp(-l))
    s = tl.where(cols, sig + tl.load(correction_bias + e, mask=cols, other=0.0), float("-inf"))
    grp = e // size
    gi = tl.arange(0, BG)
    # Each group's score: the sum of its two best biased scores.
    score = tl.full([BG], float("-inf"), tl.float32)
    for g in range(0, ng):
        sg = tl.where((grp == g) & cols, s, float("-inf"))
        first = tl.argmax(sg, axis=0, tie_break_left=True)
        second = tl.max(tl.where(e == first, float("-inf"), sg), axis=0)
        score = tl.where(gi == g, tl.max(sg, axis=0) + second, score)
    # The topk_group best groups, then the experts they hold.
    kept = tl.zeros([BG], dtype=tl.int32)
    cand = score
    for j in range(0, tg):
        best = tl.argmax(cand, axis=0, tie_break_left=True)
        kept = tl.where(gi == best, 1, kept)
        cand = tl.where(gi == best, float("-inf"), cand)
    allowed = e < 0
    for g in range(0, ng):
        is_kept = tl.sum(tl.where(gi == g, kept, 0), axis=0) > 0
        allowed = allowed | ((grp == g) & is_kept)
    # The topk best biased scores among them; the weights are the sigmoids.
    slot = tl.arange(0, BK)
    ids = tl.zeros([BK], dtype=tl.int32)
    w = tl.zeros([BK], dtype=tl.float32)
    cand_e = tl.where(allowed & cols, s, float("-inf"))
    for j in range(0, nk):
        best = tl.argmax(cand_e, axis=0, tie_break_left=True)
        pick = e == best
        ids = tl.where(slot == j, best, ids)
        w = tl.where(slot == j, tl.sum(tl.where(pick, sig, 0.0), axis=0), w)
        cand_e = tl.where(pick, float("-inf"), cand_e)
    factor = tl.where(renormalize != 0, routed_scaling_factor / tl.sum(w, axis=0), routed_scaling_factor)
    out = (slot < nk) & live
    tl.store(topk_ids + t * nk + slot, ids, mask=out)
    tl.store(topk_weights + t * nk + slot, w * factor, mask=out)


@triton.jit
def moe_align_count(topk_ids, sorted_token_ids, expert_ids, num_tokens_post_padded, cumsum, pairs, experts, block_size,
                    capacity, BE: tl.constexpr, BP: tl.constexpr, BB: tl.constexpr):
    n = pairs.to(tl.int32)
    ne = experts.to(tl.int32)
    bs = block_size.to(tl.int32)
    cap = capacity.to(tl.int32)
    e = tl.arange(0, BE)
    count = tl.zeros([BE], dtype=tl.int32)
    for start in range(0, n, BP):
        p = start + tl.arange(0, BP)
        ids = tl.load(topk_ids + p, mask=p < n, other=0)
        count += tl.histogram(ids, BE, mask=p < n)
    padded = (count + bs - 1) // bs * bs
    ends = tl.cumsum(padded, axis=0)
    total = tl.sum(padded, axis=0)
    tl.store(cumsum + e, ends - padded, mask=e < ne)  # each expert's first row: the scatter's cursor
    tl.store(cumsum + ne, total)
    tl.store(num_tokens_post_padded, total)
    # Block b belongs to the expert counted by the ranges ending at or before its first row; 0 past them.
    blocks = (cap + bs - 1) // bs
    for start in range(0, blocks, BB):
        b = start + tl.arange(0, BB)
        row = b * bs
        before = (ends[None, :] <= row[:, None]) & (e[None, :] < ne)
        owner = tl.sum(before.to(tl.int32), axis=1)
        tl.store(expert_ids + b, tl.where(row < total, owner, 0), mask=b < blocks)
    for start in range(0, cap, BP):
        r = start + tl.arange(0, BP)
        tl.store(sorted_token_ids + r, tl.zeros([BP], dtype=tl.int32) + n, mask=r < cap)


@triton.jit
def moe_align_scatter(topk_ids, sorted_token_ids, cumsum, pairs, experts, BS: tl.constexpr):
    n = pairs.to(tl.int32)
    ne = experts.to(tl.int32)
    p = tl.program_id(0) * BS + tl.arange(0, BS)
    live = p < n
    e = tl.load(topk_ids + p, mask=live, other=0)
    live = live & (e >= 0) & (e < ne)
    row = tl.atomic_add(cumsum + e, tl.full([BS], 1, tl.int32), mask=live)
    tl.store(sorted_token_ids + row, p, mask=live)
