# causal_conv1d seeds in Triton (naive on purpose): one tile of BX channels of one token (prefill) or
# one row (decode) per program (axis 0: channels, axis 1: tokens or rows). In conv1d_prefill the
# program of a sequence's first token also computes the sequence's second and third tokens (their
# windows reach into the cache line too) and then overwrites the line: every read and the write of a
# line stay in one program. block= is the tile; the threads are num_warps x 32.
# kevo: tune BX 256 128 512 1024
# kevo: tune num_warps 4 2 8
# kevo: launch conv1d_prefill block=BX,1
# kevo: launch conv1d_update block=BX,1
import triton
import triton.language as tl


@triton.jit
def _conv_silu(w0, w1, w2, w3, b, x3, x2, x1, x0):
    # The taps oldest first, then the bias, in fp32; silu in fp32; one rounding at the store.
    acc = w0 * x3.to(tl.float32)
    acc += w1 * x2.to(tl.float32)
    acc += w2 * x1.to(tl.float32)
    acc += w3 * x0.to(tl.float32)
    acc += b
    return (acc / (1.0 + tl.exp(-acc))).to(tl.bfloat16)


@triton.jit
def conv1d_prefill(x, weight, bias, conv_states, query_start_loc, cache_indices, has_initial_state, out, dim, tokens,
                   seqs, BX: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    d = dim.to(tl.int64)
    c = tl.program_id(0).to(tl.int64) * BX + tl.arange(0, BX)
    inside = (c < d) & (t < tokens.to(tl.int64))  # the grid is rounded up to whole tiles
    # The sequence holding t: how many later sequences start at or before it.
    s = tl.program_id(1) * 0
    for later in range(1, seqs):
        s += (tl.load(query_start_loc + later) <= t).to(tl.int32)
    start = tl.load(query_start_loc + s).to(tl.int64)
    n = tl.load(query_start_loc + s + 1).to(tl.int64) - start
    w0 = tl.load(weight + c * 4, mask=inside, other=0.0).to(tl.float32)
    w1 = tl.load(weight + c * 4 + 1, mask=inside, other=0.0).to(tl.float32)
    w2 = tl.load(weight + c * 4 + 2, mask=inside, other=0.0).to(tl.float32)
    w3 = tl.load(weight + c * 4 + 3, mask=inside, other=0.0).to(tl.float32)
    b = tl.load(bias + c, mask=inside, other=0.0).to(tl.float32)
    j = t - start
    if j >= 3:
        x3 = tl.load(x + (t - 3) * d + c, mask=inside, other=0.0)
        x2 = tl.load(x + (t - 2) * d + c, mask=inside, other=0.0)
        x1 = tl.load(x + (t - 1) * d + c, mask=inside, other=0.0)
        x0 = tl.load(x + t * d + c, mask=inside, other=0.0)
        tl.store(out + t * d + c, _conv_silu(w0, w1, w2, w3, b, x3, x2, x1, x0), mask=inside)
    if j == 0:
        # s0..s2: the window before the sequence (its line, or zeros); y0..y2 its first tokens.
        line = conv_states + tl.load(cache_indices + s).to(tl.int64) * 3 * d
        cont = inside & (tl.load(has_initial_state + s) != 0)
        s0 = tl.load(line + c, mask=cont, other=0.0)
        s1 = tl.load(line + d + c, mask=cont, other=0.0)
        s2 = tl.load(line + 2 * d + c, mask=cont, other=0.0)
        y0 = tl.load(x + start * d + c, mask=inside, other=0.0)
        y1 = tl.load(x + (start + 1) * d + c, mask=inside & (n > 1), other=0.0)
        y2 = tl.load(x + (start + 2) * d + c, mask=inside & (n > 2), other=0.0)
        tl.store(out + start * d + c, _conv_silu(w0, w1, w2, w3, b, s0, s1, s2, y0), mask=inside)
        tl.store(out + (start + 1) * d + c, _conv_silu(w0, w1, w2, w3, b, s1, s2, y0, y1), mask=inside & (n > 1))
        tl.store(out + (start + 2) * d + c, _conv_silu(w0, w1, w2, w3, b, s2, y0, y1, y2), mask=inside & (n > 2))
        # The line afterwards: the last 3 values of (window before, tokens), oldest first. Slot k
        # takes token n - 3 + k, or for a sequence shorter than 3 the state value at n + k.
        for slot in tl.static_range(3):
            q = n - 3 + slot
            tok = tl.load(x + (start + q) * d + c, mask=inside & (q >= 0), other=0.0)
            kept = tl.where(n + slot == 1, s1, s2)
            tl.store(line + slot * d + c, tl.where(q >= 0, tok, kept), mask=inside)


@triton.jit
def conv1d_update(x, weight, bias, conv_state, conv_state_indices, out, dim, batch, BX: tl.constexpr):
    r = tl.program_id(1).to(tl.int64)
    d = dim.to(tl.int64)
    c = tl.program_id(0).to(tl.int64) * BX + tl.arange(0, BX)
    inside = (c < d) & (r < batch.to(tl.int64))
    line = conv_state + tl.load(conv_state_indices + r).to(tl.int64) * 3 * d
    s0 = tl.load(line + c, mask=inside, other=0.0)
    s1 = tl.load(line + d + c, mask=inside, other=0.0)
    s2 = tl.load(line + 2 * d + c, mask=inside, other=0.0)
    xv = tl.load(x + r * d + c, mask=inside, other=0.0)
    w0 = tl.load(weight + c * 4, mask=inside, other=0.0).to(tl.float32)
    w1 = tl.load(weight + c * 4 + 1, mask=inside, other=0.0).to(tl.float32)
    w2 = tl.load(weight + c * 4 + 2, mask=inside, other=0.0).to(tl.float32)
    w3 = tl.load(weight + c * 4 + 3, mask=inside, other=0.0).to(tl.float32)
    b = tl.load(bias + c, mask=inside, other=0.0).to(tl.float32)
    tl.store(out + r * d + c, _conv_silu(w0, w1, w2, w3, b, s0, s1, s2, xv), mask=inside)
    # Shift in the new token: slot 0 is the oldest.
    tl.store(line + c, s1, mask=inside)
    tl.store(line + d + c, s2, mask=inside)
    tl.store(line + 2 * d + c, xv, mask=inside)
