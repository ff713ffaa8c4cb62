# rope seed in Triton (naive on purpose): neox rotary embedding in place on q and k, one tile of BX
# rotation pairs (x_i, x_{i+d/2}) of one token per program (axis 0: the pairs of all q heads then
# all k heads, axis 1: tokens); cos and sin read from the fp32 cache row of the token's position.
# block= is the tile; the threads are num_warps x 32.
# kevo: tune BX 128 64 256 512 1024
# kevo: tune num_warps 4 2 8
# kevo: launch rope block=BX,1
import triton
import triton.language as tl


@triton.jit
def rope(positions, q, k, cos_sin_cache, head_dim, q_heads, kv_heads, tokens, BX: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    d = head_dim.to(tl.int64)
    hq = q_heads.to(tl.int64)
    hkv = kv_heads.to(tl.int64)
    half = d // 2
    p = tl.program_id(0).to(tl.int64) * BX + tl.arange(0, BX)
    inside = (p < (hq + hkv) * half) & (t < tokens.to(tl.int64))  # the grid is rounded up to whole tiles
    head = p // half
    i = p % half
    # Heads 0 .. q_heads-1 are q's, the rest k's: two masked accesses, one per tensor.
    in_q = inside & (head < hq)
    in_k = inside & (head >= hq)
    q_row = q + (t * hq + head) * d
    k_row = k + (t * hkv + (head - hq)) * d
    cs = cos_sin_cache + tl.load(positions + t).to(tl.int64) * d
    c = tl.load(cs + i, mask=inside, other=0.0)
    s = tl.load(cs + half + i, mask=inside, other=0.0)
    x1 = tl.where(in_q, tl.load(q_row + i, mask=in_q, other=0.0), tl.load(k_row + i, mask=in_k, other=0.0)).to(tl.float32)
    x2 = tl.where(in_q, tl.load(q_row + half + i, mask=in_q, other=0.0),
                  tl.load(k_row + half + i, mask=in_k, other=0.0)).to(tl.float32)
    # fp32 products and sums, one rounding to bf16 at the store.
    o1 = (x1 * c - x2 * s).to(tl.bfloat16)
    o2 = (x2 * c + x1 * s).to(tl.bfloat16)
    tl.store(q_row + i, o1, mask=in_q)
    tl.store(q_row + half + i, o2, mask=in_q)
    tl.store(k_row + i, o1, mask=in_k)
    tl.store(k_row + half + i, o2, mask=in_k)
