# heat2d seed in Triton (naive on purpose): one BX x BY tile of cells per program, every neighbour
# loaded straight from global memory. block= is the tile; the threads are num_warps x 32.
# kevo: tune BX 64 32 128
# kevo: tune BY 4 1 2 8
# kevo: tune num_warps 4 2 8
# kevo: launch heat_step block=BX,BY
import triton
import triton.language as tl


@triton.jit
def heat_step(u_in, u_out, nx, ny, alpha, BX: tl.constexpr, BY: tl.constexpr):
    xs = tl.program_id(0) * BX + tl.arange(0, BX)
    ys = tl.program_id(1) * BY + tl.arange(0, BY)
    x = xs[None, :]
    y = ys[:, None]
    inside = (x < nx) & (y < ny)  # the grid is rounded up to whole tiles
    i = y.to(tl.int64) * nx + x
    c = tl.load(u_in + i, mask=inside)
    interior = inside & (x > 0) & (y > 0) & (x < nx - 1) & (y < ny - 1)
    # Offsets in int64 before they meet the pointer: `u_in + i - nx` would add -nx as an unsigned
    # 32-bit value (nx is u32), 16 GB past the row above (found on an H100).
    west = tl.load(u_in + (i - 1), mask=interior)
    east = tl.load(u_in + (i + 1), mask=interior)
    north = tl.load(u_in + (i - nx), mask=interior)
    south = tl.load(u_in + (i + nx), mask=interior)
    stepped = c + alpha * (west + east + north + south - 4.0 * c)
    # Dirichlet: boundary cells keep their value.
    tl.store(u_out + i, tl.where(interior, stepped, c), mask=inside)
