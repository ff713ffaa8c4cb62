# attention_prefill seed in Triton (naive on purpose): causal grouped-query attention over a packed
# variable-length batch, flash-attention style. One program per (tile of BM query tokens, query
# head): every row finds its own sequence start in cu_seqlens (a binary search, so a tile may span
# sequences), then the program walks the keys from the first row's sequence start to the tile's last
# token in BN-wide slices: S = Q K^T by tl.dot in fp32, masked to own sequence and j <= i, an online
# softmax in fp32 (running maximum from a finite floor, so fully masked slices give p = 0, never NaN),
# P rounded once to bf16 for the tensor-core P V product with the normaliser summed from the fp32 P,
# and the output divided and rounded to bf16 once, at the store. head_dim (64 or 128) is a runtime
# parameter: the tiles are BD = 128 wide and masked to head_dim. kv head = h / (q_heads / kv_heads).
# kevo passes no alignment facts, so the loads say what the brief guarantees (16-byte aligned
# buffers, head_dim a multiple of 16) with tl.multiple_of: 16-byte vector loads, not 2-byte ones.
# block= is the tile of (tokens, query heads); the threads are num_warps x 32.
# kevo: tune BM 64 32 128
# kevo: tune BN 64 32 128
# kevo: tune num_warps 4 8
# kevo: tune num_stages 2 1 3
# kevo: launch attention_prefill block=BM,1
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
FLOOR = tl.constexpr(-1.0e30)  # the running maximum's start: below any logit, finite


@triton.jit
def attention_prefill(q, k, v, cu_seqlens, out, tokens, num_seqs, q_heads, kv_heads, head_dim, scale,
                      BM: tl.constexpr, BN: tl.constexpr, BD: tl.constexpr = 128):
    n_tok = tokens.to(tl.int32)
    n_seq = num_seqs.to(tl.int32)
    hq = q_heads.to(tl.int32)
    hkv = kv_heads.to(tl.int32)
    hd = head_dim.to(tl.int32) // 16 * 16  # = head_dim (64 or 128), now known a multiple of 16
    h = tl.program_id(1)
    kvh = h // (hq // hkv)
    first = tl.program_id(0) * BM
    rows = first + tl.arange(0, BM)
    row_ok = rows < n_tok
    rows_c = tl.minimum(rows, n_tok - 1)

    # The start of each row's sequence: the largest cu_seqlens[b] <= i, with the invariant
    # cu_seqlens[lo] <= i < cu_seqlens[hi]; ceil(log2 num_seqs) halvings leave hi = lo + 1.
    lo = tl.zeros([BM], dtype=tl.int32)
    hi = tl.zeros([BM], dtype=tl.int32) + n_seq
    span = n_seq
    while span > 1:
        mid = (lo + hi) // 2
        below = tl.load(cu_seqlens + mid) <= rows_c
        lo = tl.where(below, mid, lo)
        hi = tl.where(below, hi, mid)
        span = (span + 1) // 2
    start = tl.load(cu_seqlens + lo)
    kv_lo = tl.min(start, axis=0)
    kv_hi = tl.minimum(first + BM, n_tok)

    d = tl.arange(0, BD)
    d_ok = d < hd
    q_at = q + (rows_c.to(tl.int64)[:, None] * hq + h) * hd + d[None, :]
    q_tile = tl.load(tl.multiple_of(q_at, [1, 16]), mask=d_ok[None, :], other=0.0)
    qk_scale = scale * LOG2E  # exp(x) = exp2(x log2 e): logits are kept in the log2 domain

    m_i = tl.zeros([BM], dtype=tl.float32) + FLOOR
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, BD], dtype=tl.float32)
    for kv_start in range(kv_lo, kv_hi, BN):
        cols = kv_start + tl.arange(0, BN)
        col_ok = cols < kv_hi
        kv_rows = cols.to(tl.int64) * hkv + kvh
        k_at = k + kv_rows[None, :] * hd + d[:, None]  # K^T: BD x BN
        k_tile = tl.load(tl.multiple_of(k_at, [16, 1]), mask=d_ok[:, None] & col_ok[None, :], other=0.0)
        s = tl.dot(q_tile, k_tile) * qk_scale
        valid = (cols[None, :] >= start[:, None]) & (cols[None, :] <= rows_c[:, None])
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v_at = v + kv_rows[:, None] * hd + d[None, :]
        v_tile = tl.load(tl.multiple_of(v_at, [1, 16]), mask=col_ok[:, None] & d_ok[None, :], other=0.0)
        acc = tl.dot(p.to(tl.bfloat16), v_tile, acc * alpha[:, None])
        m_i = m_new

    o = acc / l_i[:, None]
    out_at = out + (rows_c.to(tl.int64)[:, None] * hq + h) * hd + d[None, :]
    tl.store(tl.multiple_of(out_at, [1, 16]), o.to(tl.bfloat16), mask=row_ok[:, None] & d_ok[None, :])
