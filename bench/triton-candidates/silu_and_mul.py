# silu_and_mul best-known Triton kernel (not yet measured on a GPU): out[t, i] = bf16(silu(g) * u),
# one tile of BLOCK outputs of one token per program (axis 0 along the row, axis 1 tokens), silu and
# the product in fp32 (tl.exp is ex2.approx: ~2 fp32 ulp, far below a bf16 ulp), one rounding at
# the store. What should make it fast: every access is a 16-byte vector. The seed's row offsets
# t * 2d are multiples of an unknown integer to Triton (integers are not specialised), so it can
# only prove 2-byte alignment and issues one ld.global.b16 per element; here `d // 64 * 64` (d is a
# multiple of 64, the brief) makes the row starts provably 128-byte aligned and the mask `i < d`
# constant over runs of 64, so the gate, up and output accesses become ld/st.global.v4 (eight bf16
# per instruction), as in best.cu's uint4 path. 1024 outputs over 4 warps = eight per thread, one
# vector of each operand; the evict_first hints keep the streamed x and out from pushing anything
# useful out of L2. Large-profile rows (d = 14336, 28672, 18432) are whole multiples of 1024; d = 768
# leaves a quarter of one tile masked.
# block= is the tile: grid = ceil(d / BLOCK) x tokens, as the task fixes.
# kevo: tune BLOCK 1024 2048 512 4096
# kevo: tune num_warps 4 8 2
# kevo: launch silu_and_mul block=BLOCK,1
import triton
import triton.language as tl


@triton.jit
def silu_and_mul(x, out, d, tokens, BLOCK: tl.constexpr):
    dd = d // 64 * 64  # == d: d is a multiple of 64 at every size
    t = tl.program_id(1).to(tl.int64)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = i < dd
    row = x + t * 2 * dd
    g = tl.load(row + i, mask=inside, other=0.0, eviction_policy="evict_first").to(tl.float32)
    u = tl.load(row + dd + i, mask=inside, other=0.0, eviction_policy="evict_first").to(tl.float32)
    # silu(g) * u in fp32, rounded once (round to nearest even) at the store. For g below -88.7,
    # exp(-g) is inf and the quotient -0: the contract's floor admits it.
    tl.store(out + t * dd + i, (g / (1.0 + tl.exp(-g)) * u).to(tl.bfloat16), mask=inside,
             eviction_policy="evict_first")
