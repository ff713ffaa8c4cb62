# silu_and_mul seed in Triton (naive on purpose): out[t, i] = silu(x[t, i]) * x[t, d + i], one tile
# of BLOCK outputs of one token per program (axis 0: along the row, axis 1: tokens).
# block= is the tile; the threads are num_warps x 32.
# kevo: tune BLOCK 1024 256 512 2048
# kevo: tune num_warps 4 2 8
# kevo: launch silu_and_mul block=BLOCK,1
import triton
import triton.language as tl


@triton.jit
def silu_and_mul(x, out, d, tokens, BLOCK: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = i < d
    g = tl.load(x + t * 2 * d + i, mask=inside).to(tl.float32)
    u = tl.load(x + t * 2 * d + d + i, mask=inside).to(tl.float32)
    # silu(g) and the product stay in fp32: one rounding, at the store.
    tl.store(out + t * d + i, (g / (1.0 + tl.exp(-g)) * u).to(tl.bfloat16), mask=inside)
