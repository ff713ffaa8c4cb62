# qk_norm_rope_kv seed in Triton (naive on purpose): one program per head of one token (axis 0: the
# q, k and v heads of a token's qkv row, axis 1: tokens; the tile is one head of head_dim = 128
# values). q and k heads: the sum of squares in fp32, the normed value kept in fp32, each element
# rotated with its neox partner (i, i + d/2, loaded again); q to q_out, k to key_cache at the token's
# slot; v heads copied as bits to value_cache. A padding token (slot -1) writes only its q.
# block= is the tile; the threads are num_warps x 32.
# kevo: tune BX 128
# kevo: tune num_warps 4 2 8
# kevo: launch qk_norm_rope_kv block=BX,1
import triton
import triton.language as tl


@triton.jit
def qk_norm_rope_kv(qkv, q_weight, k_weight, positions, cos_sin_cache, slot_mapping, q_out, key_cache, value_cache,
                    head_dim, q_heads, kv_heads, tokens, eps, BX: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    head = tl.program_id(0).to(tl.int64)  # BX == head_dim: one head a program
    d = head_dim.to(tl.int64)
    hq = q_heads.to(tl.int64)
    hkv = kv_heads.to(tl.int64)
    heads = hq + 2 * hkv
    half = d // 2
    j = tl.arange(0, BX).to(tl.int64)
    inside = (j < d) & (t < tokens.to(tl.int64)) & (head < heads)
    row = qkv + (t * heads + head) * d
    x = tl.load(row + j, mask=inside, other=0.0).to(tl.float32)
    inv_rms = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / d + eps)
    is_q = head < hq
    is_k = (head >= hq) & (head < hq + hkv)
    # The partner of the neox pair, and both gammas (q_weight for q heads, k_weight for k heads).
    partner = tl.where(j < half, j + half, j - half)
    xp = tl.load(row + partner, mask=inside, other=0.0).to(tl.float32)
    w = tl.where(is_q, tl.load(q_weight + j, mask=inside, other=0.0), tl.load(k_weight + j, mask=inside, other=0.0))
    wp = tl.where(is_q, tl.load(q_weight + partner, mask=inside, other=0.0),
                  tl.load(k_weight + partner, mask=inside, other=0.0))
    n = x * inv_rms * w.to(tl.float32)
    n_partner = xp * inv_rms * wp.to(tl.float32)
    cs = cos_sin_cache + tl.load(positions + t).to(tl.int64) * d
    i = j % half
    c = tl.load(cs + i, mask=inside, other=0.0)
    s = tl.load(cs + half + i, mask=inside, other=0.0)
    # first half: x1 c - x2 s; second half: x2 c + x1 s. One rounding to bf16 at the store.
    out = tl.where(j < half, n * c - n_partner * s, n * c + n_partner * s).to(tl.bfloat16)
    slot = tl.load(slot_mapping + t).to(tl.int64)
    cache_row = slot * hkv * d
    mapped = inside & (slot >= 0)
    tl.store(q_out + (t * hq + head) * d + j, out, mask=inside & is_q)
    tl.store(key_cache + cache_row + (head - hq) * d + j, out, mask=mapped & is_k)
    tl.store(value_cache + cache_row + (head - hq - hkv) * d + j, tl.load(row + j, mask=mapped & (head >= hq + hkv)),
             mask=mapped & (head >= hq + hkv))
