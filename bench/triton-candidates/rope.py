# rope best-known Triton kernel (not yet measured on a GPU): neox rotary embedding in place on q and
# k, fp32 products and sums, one rounding to bf16 per output. One program covers BX consecutive
# rotation pairs (x_i, x_{i+d/2}) of each of TY consecutive tokens (block=BX,TY), seen as a
# [TY * BX / 32, 32] tile: each tile row is 32 consecutive pairs, which never straddle a head
# because d/2 (32 or 64) is a multiple of 32. What should make it fast:
#   - 16-byte accesses: the seed works per pair with a runtime `p // half`, `p % half` per element,
#     so Triton can prove no contiguity and issues one 2-byte load or store per element (and every
#     access twice, masked, once per tensor). Here the head, its row (q's or k's, one pointer
#     select per tile row) and the cos/sin offset are computed once per 32 pairs, `head_dim // 64`
#     (head_dim is 64 or 128, the brief) makes every row start provably aligned, so x1, x2 move as
#     ld/st.global.v4 (eight bf16) and cos, sin as v4 fp32 loads;
#   - no idle tiles at the large sizes: per token there are (Hq + Hkv) * 64 pairs (2560, 576, 2304),
#     so BX = 128 divides all but 576 (4.5 tiles: 10% masked), and TY = 8 tokens per program give
#     each of the 128 threads one 16-byte vector of x1 and one of x2 (8 KB moved per program);
#   - cos and sin rows are read per tile row: the 4T d bytes of the model come from DRAM once per
#     token, the other heads' reads of the same row hit L1.
# Token rows past `tokens` (TY does not divide it) and pairs past the token's last head are masked.
# block= is the tile: grid = ceil((Hq + Hkv) d/2 / BX) x ceil(tokens / TY), as the task fixes.
# kevo: tune BX 128 64 256 512
# kevo: tune TY 8 4 16 2 1
# kevo: tune num_warps 4 8 2
# kevo: launch rope block=BX,TY
import triton
import triton.language as tl


@triton.jit
def rope(positions, q, k, cos_sin_cache, head_dim, q_heads, kv_heads, tokens, BX: tl.constexpr, TY: tl.constexpr):
    # head_dim is 64 or 128: d and d/2 are multiples of 64 and 32, which Triton can now see.
    # The u32 parameters as int32 (all far below 2^31), so that the index arithmetic is signed.
    hd = head_dim.to(tl.int32)
    hq = q_heads.to(tl.int32)
    hkv = kv_heads.to(tl.int32)
    d = hd // 64 * 64
    half = hd // 64 * 32
    total = (hq + hkv) * half  # pairs per token
    R: tl.constexpr = BX // 32  # tile rows per token
    rr = tl.arange(0, TY * R)
    t = tl.program_id(1) * TY + rr // R
    p0 = tl.program_id(0) * BX + (rr % R) * 32  # first pair of each tile row
    ok = (t < tokens.to(tl.int32)) & (p0 < total)
    head = p0 // half
    i0 = p0 - head * half
    t64 = t.to(tl.int64)
    # Heads 0 .. q_heads-1 are q's, the rest k's: one pointer per tile row.
    row = tl.where(head < hq, q + (t64 * hq + head) * d, k + (t64 * hkv + (head - hq)) * d) + i0
    pos = tl.load(positions + t, mask=ok, other=0)
    cs = cos_sin_cache + pos.to(tl.int64) * d + i0
    j = tl.arange(0, 32)
    mask = ok[:, None]
    lo = row[:, None] + j[None, :]
    hi = lo + half
    x1 = tl.load(lo, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(hi, mask=mask, other=0.0).to(tl.float32)
    c = tl.load(cs[:, None] + j[None, :], mask=mask, other=0.0)
    s = tl.load(cs[:, None] + half + j[None, :], mask=mask, other=0.0)
    # fp32 products and sums, one rounding (to nearest even) at the store.
    tl.store(lo, (x1 * c - x2 * s).to(tl.bfloat16), mask=mask)
    tl.store(hi, (x2 * c + x1 * s).to(tl.bfloat16), mask=mask)
