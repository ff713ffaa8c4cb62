# mla_decode_paged seed in Triton (naive on purpose): one program per (head, request), as the CUDA seed
# has one thread. It walks the request's context in slices of BN tokens: each token's page from the
# block table (block_table[b, t / page_size], slot t % page_size), the slice's cache rows gathered as a
# BN x 512 tile (c_kv) and a BN x 64 tile (k_rope): 576 is no power of two, so the two parts are two
# tiles, and the score is the sum of both dot products; the value is the c_kv tile itself. Logits in
# fp32, an online softmax in fp32 (running maximum from a finite floor, tokens at or past the context
# masked to p = 0) and an fp32 accumulator of 512, divided and rounded to bf16 once, at the store. The
# workspace and counters are not used (no split of the context). kevo passes no alignment facts, so the
# loads say what the brief guarantees (16-byte aligned buffers, rows of 576 and 512 bf16) with
# tl.multiple_of. block= is the tile of (heads, requests): one of each; the threads are num_warps x 32.
# kevo: tune BN 16 32 8
# kevo: tune num_warps 4 8
# kevo: launch mla_decode_paged block=1,1
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)
FLOOR = tl.constexpr(-1.0e30)  # the running maximum's start: below any logit, finite
D_QK = tl.constexpr(576)  # q . row: 512 latent + 64 rope
D_V = tl.constexpr(512)   # the value: the row's latent part
D_R = tl.constexpr(64)


@triton.jit
def mla_decode_paged(q, kv_cache, block_table, cache_seqlens, out, workspace, counters, num_seqs, num_heads, page_size,
                     max_pages_per_seq, softmax_scale, BN: tl.constexpr):
    nh = num_heads.to(tl.int32)
    ps = page_size.to(tl.int32)
    h = tl.program_id(0)
    b = tl.program_id(1)
    ctx = tl.load(cache_seqlens + b)
    table = block_table + b.to(tl.int64) * max_pages_per_seq.to(tl.int64)

    dv = tl.arange(0, D_V)
    dr = tl.arange(0, D_R)
    q_at = q + (b.to(tl.int64) * nh + h) * D_QK
    q_lat = tl.load(tl.multiple_of(q_at + dv, [16])).to(tl.float32)
    q_rope = tl.load(tl.multiple_of(q_at + D_V + dr, [16])).to(tl.float32)
    qk_scale = softmax_scale * LOG2E  # exp(x) = exp2(x log2 e): logits are kept in the log2 domain

    m_i = tl.zeros([1], dtype=tl.float32) + FLOOR
    l_i = tl.zeros([1], dtype=tl.float32)
    acc = tl.zeros([D_V], dtype=tl.float32)
    for start in range(0, ctx, BN):
        t = start + tl.arange(0, BN)
        t_ok = t < ctx
        page = tl.load(table + t // ps, mask=t_ok, other=0)
        row = (page.to(tl.int64) * ps + t % ps) * D_QK
        lat_at = kv_cache + row[:, None] + dv[None, :]
        lat = tl.load(tl.multiple_of(lat_at, [1, 16]), mask=t_ok[:, None], other=0.0).to(tl.float32)
        rope_at = kv_cache + row[:, None] + D_V + dr[None, :]
        rope = tl.load(tl.multiple_of(rope_at, [1, 16]), mask=t_ok[:, None], other=0.0).to(tl.float32)
        s = (tl.sum(lat * q_lat[None, :], axis=1) + tl.sum(rope * q_rope[None, :], axis=1)) * qk_scale
        s = tl.where(t_ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        acc = acc * alpha + tl.sum(p[:, None] * lat, axis=0)
        m_i = m_new

    o_at = out + (b.to(tl.int64) * nh + h) * D_V + dv
    tl.store(tl.multiple_of(o_at, [16]), (acc / l_i).to(tl.bfloat16))
