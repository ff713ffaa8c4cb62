# topk_sampling seed in Triton (naive on purpose): one program per row (the domain is 1 x rows, so
# the grid is 1 x rows), which walks the row in tiles of BLOCK. The threshold by walking the row's
# distinct finite values downwards, two full passes over the row per distinct value (the largest
# value below the last one, then a count of its copies) until k values are counted or none is
# left, then a pass for the sum of the kept exponentials and one that writes the probabilities.
# block= is the tile; the threads are num_warps x 32.
# kevo: tune BLOCK 1024 256 512
# kevo: tune num_warps 4 8 16
# kevo: launch topk_sampling block=BLOCK,1
import triton
import triton.language as tl


@triton.jit
def topk_sampling(logits, probs, vocab, rows, k, temperature, BLOCK: tl.constexpr):
    r = tl.program_id(1).to(tl.int64)
    # A program past the last row (none with the grid of 1 x rows) sees an empty row: it writes nothing.
    n = tl.where(r < rows.to(tl.int64), vocab.to(tl.int32), 0)  # vocab < 2^31
    want = k.to(tl.int32)
    row = logits + r * n
    out = probs + r * n
    below = tl.full([], float("inf"), tl.float32)
    tau = tl.full([], float("inf"), tl.float32)
    m = tl.full([], float("-inf"), tl.float32)
    counted = tl.full([], 0, tl.int32)
    while counted < want:
        # next = the largest value below `below`; -inf (and the tile's tail, loaded as -inf) never qualifies.
        best = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, n, BLOCK):
            v = start + tl.arange(0, BLOCK)
            l = tl.load(row + v, mask=v < n, other=float("-inf"))
            best = tl.where((l < below) & (l > best), l, best)
        nxt = tl.max(best, axis=0)
        copies = tl.zeros([BLOCK], dtype=tl.int32)
        for start in range(0, n, BLOCK):
            v = start + tl.arange(0, BLOCK)
            l = tl.load(row + v, mask=v < n, other=float("-inf"))
            copies += (l == nxt).to(tl.int32)
        finite = nxt > float("-inf")
        # No finite value left (fewer than k finite ones): stop, every finite value is kept.
        m = tl.where(finite & (m == float("-inf")), nxt, m)
        tau = tl.where(finite, nxt, tau)
        below = tau
        counted = tl.where(finite, counted + tl.sum(copies, axis=0), want)
    part = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        v = start + tl.arange(0, BLOCK)
        l = tl.load(row + v, mask=v < n, other=float("-inf"))
        part += tl.where(l >= tau, tl.exp((l - m) / temperature), 0.0)
    total = tl.sum(part, axis=0)
    for start in range(0, n, BLOCK):
        v = start + tl.arange(0, BLOCK)
        inside = v < n
        l = tl.load(row + v, mask=inside, other=float("-inf"))
        tl.store(out + v, tl.where(l >= tau, tl.exp((l - m) / temperature) / total, 0.0), mask=inside)
