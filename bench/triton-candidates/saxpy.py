# saxpy best-known Triton kernel for the H200 (sm_90): y <- a*x + y in place, one launch.
#
# WHY IT SHOULD BE FAST
# - Pure streaming (12 B per element, no reuse): the goal is enough 16-byte requests in flight to
#   saturate HBM3e. One program covers BLOCK = 4096 elements with 4 warps, i.e. 32 elements per
#   thread: 8 x 16 B loads of x and 8 of y per thread, all issued before the first store (the
#   program is straight-line code), twice the bytes in flight of tasks/saxpy/best.cu.
# - Vector width: kevo does not specialise n, so a load masked by `offsets < n` cannot be proven
#   uniform over 4 lanes and Triton would emit 4-byte accesses (the seed's fate). Here every whole
#   tile (all but at most the last one) takes an unmasked branch: the tile start is a multiple of
#   BLOCK and the buffers are 16-byte aligned, so Triton emits LDG.128 / STG.128 (ld.global.v4),
#   and a warp instruction covers 512 contiguous bytes. Only the last, partial tile is masked.
# - Streaming cache hints (evict_first) on x, y and the store of y: nothing is reused.
# - The tile's start is computed in 64 bits once per program (a scalar), so any n < 2^32 is safe;
#   the per-element offsets stay 32-bit.
# Not yet measured on a GPU. Expected: at or near copy speed, about the CUDA best.cu's 0.96-0.99
# of the static ceiling; the Triton seed (scalar 4-byte accesses, 1024 per program) should be
# noticeably slower.
# kevo: tune BLOCK 4096 8192 2048 1024
# kevo: tune num_warps 4 8 2
# kevo: launch saxpy block=BLOCK
import triton
import triton.language as tl


@triton.jit
def saxpy(x, y, a, n, BLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    xs_ptr = x + start
    ys_ptr = y + start
    offs = tl.arange(0, BLOCK)
    left = n.to(tl.int64) - start  # elements of this tile inside [0, n); > 0 for every program
    if left >= BLOCK:
        # whole tile: no mask, so the accesses are 16-byte vectors
        xv = tl.load(xs_ptr + offs, eviction_policy="evict_first")
        yv = tl.load(ys_ptr + offs, eviction_policy="evict_first")
        tl.store(ys_ptr + offs, a * xv + yv, eviction_policy="evict_first")
    else:
        # the last, partial tile
        inside = offs < left
        xv = tl.load(xs_ptr + offs, mask=inside, other=0.0, eviction_policy="evict_first")
        yv = tl.load(ys_ptr + offs, mask=inside, other=0.0, eviction_policy="evict_first")
        tl.store(ys_ptr + offs, a * xv + yv, mask=inside, eviction_policy="evict_first")
