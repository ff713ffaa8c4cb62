# saxpy seed in Triton (naive on purpose): y <- a*x + y, one tile of BLOCK elements per program.
# In Triton, a launch directive's block= is the tile one program covers; its threads are num_warps x 32.
# kevo: tune BLOCK 1024 256 512 2048 4096
# kevo: tune num_warps 4 2 8
# kevo: launch saxpy block=BLOCK
import triton
import triton.language as tl


@triton.jit
def saxpy(x, y, a, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n  # the grid is rounded up to whole tiles
    xs = tl.load(x + offsets, mask=inside)
    ys = tl.load(y + offsets, mask=inside)
    tl.store(y + offsets, a * xs + ys, mask=inside)
