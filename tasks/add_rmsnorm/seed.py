# add_rmsnorm seed in Triton (naive on purpose): one program per row (token), which walks the row
# in tiles of BLOCK twice: residual = x + residual and the sum of squares in fp32, then y.
# block= is the tile; the threads are num_warps x 32.
# kevo: tune BLOCK 1024 256 512 2048
# kevo: tune num_warps 4 8 16
# kevo: launch add_rmsnorm block=BLOCK,1
import triton
import triton.language as tl


@triton.jit
def add_rmsnorm(x, residual, weight, y, hidden, tokens, eps, BLOCK: tl.constexpr):
    base = tl.program_id(1).to(tl.int64) * hidden
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, hidden, BLOCK):
        i = start + tl.arange(0, BLOCK)
        inside = i < hidden
        # x + residual is exact in fp32; the stored residual is its one rounding to bf16, and the
        # norm is of the stored value.
        r = (tl.load(x + base + i, mask=inside).to(tl.float32) +
             tl.load(residual + base + i, mask=inside).to(tl.float32)).to(tl.bfloat16)
        tl.store(residual + base + i, r, mask=inside)
        rf = r.to(tl.float32)
        squares += tl.where(inside, rf * rf, 0.0)
    inv_rms = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / hidden + eps)
    for start in range(0, hidden, BLOCK):
        i = start + tl.arange(0, BLOCK)
        inside = i < hidden
        r = tl.load(residual + base + i, mask=inside).to(tl.float32)
        w = tl.load(weight + i, mask=inside).to(tl.float32)
        tl.store(y + base + i, (r * inv_rms * w).to(tl.bfloat16), mask=inside)
