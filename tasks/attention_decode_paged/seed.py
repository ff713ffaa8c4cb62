# attention_decode_paged seed in Triton (naive on purpose): one program per (query head, request),
# as the CUDA seed has one thread. It walks the request's context in slices of BN tokens: each
# token's physical block from the block table (block_tables[b, t / 16], slot t % 16), the keys of
# the slice gathered as a BN x BD tile, logits q . k in fp32 (a row times a tile: no tl.dot for one
# query), an online softmax in fp32 (running maximum from a finite floor, tokens at or past the
# context masked to p = 0) and an fp32 accumulator, divided and rounded to bf16 once, at the store.
# The workspace and counters are not used (no split of the context). head_dim (64 or 128) is a
# runtime parameter: the tiles are BD = 128 wide and masked to head_dim. kv head = h / (q_heads /
# kv_heads). kevo passes no alignment facts, so the loads say what the brief guarantees (16-byte
# aligned buffers, head_dim a multiple of 16) with tl.multiple_of: 16-byte vector loads.
# block= is the tile of (query heads, requests): one of each; the threads are num_warps x 32.
# kevo: tune BN 64 32 128 16
# kevo: tune num_warps 4 2 8
# kevo: launch attention_decode_paged block=1,1
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
FLOOR = tl.constexpr(-1.0e30)  # the running maximum's start: below any logit, finite
PAGE = tl.constexpr(16)  # tokens per cache block


@triton.jit
def attention_decode_paged(q, k_cache, v_cache, block_tables, context_lens, out, workspace, counters, num_seqs, q_heads,
                           kv_heads, head_dim, max_blocks_per_seq, scale, BN: tl.constexpr, BD: tl.constexpr = 128):
    hq = q_heads.to(tl.int32)
    hkv = kv_heads.to(tl.int32)
    hd = head_dim.to(tl.int32) // 16 * 16  # = head_dim (64 or 128), now known a multiple of 16
    h = tl.program_id(0)
    b = tl.program_id(1)
    kvh = h // (hq // hkv)
    ctx = tl.load(context_lens + b)
    table = block_tables + b.to(tl.int64) * max_blocks_per_seq.to(tl.int64)

    d = tl.arange(0, BD)
    d_ok = d < hd
    row = (b.to(tl.int64) * hq + h) * hd
    q_row = tl.load(tl.multiple_of(q + row + d, [16]), mask=d_ok, other=0.0).to(tl.float32)
    qk_scale = scale * LOG2E  # exp(x) = exp2(x log2 e): logits are kept in the log2 domain

    m_i = tl.zeros([1], dtype=tl.float32) + FLOOR
    l_i = tl.zeros([1], dtype=tl.float32)
    acc = tl.zeros([BD], dtype=tl.float32)
    for start in range(0, ctx, BN):
        t = start + tl.arange(0, BN)
        t_ok = t < ctx
        block = tl.load(table + t // PAGE, mask=t_ok, other=0)
        slot = (block.to(tl.int64) * PAGE + t % PAGE) * hkv + kvh
        kv_ok = t_ok[:, None] & d_ok[None, :]
        k_at = k_cache + slot[:, None] * hd + d[None, :]
        k_tile = tl.load(tl.multiple_of(k_at, [1, 16]), mask=kv_ok, other=0.0).to(tl.float32)
        s = tl.sum(k_tile * q_row[None, :], axis=1) * qk_scale
        s = tl.where(t_ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        v_at = v_cache + slot[:, None] * hd + d[None, :]
        v_tile = tl.load(tl.multiple_of(v_at, [1, 16]), mask=kv_ok, other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v_tile, axis=0)
        m_i = m_new

    tl.store(tl.multiple_of(out + row + d, [16]), (acc / l_i).to(tl.bfloat16), mask=d_ok)
