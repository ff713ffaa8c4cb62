# heat2d best-known Triton kernel for the H200 (sm_90): one explicit 5-point heat step per launch.
#
# WHY IT SHOULD BE FAST (the structure of tasks/heat2d/best.cu, in Triton)
# - A program covers BX = 512 columns of BY = 8 rows with 4 warps: each thread owns 4 adjacent
#   cells (one 16-byte vector) of every row, a warp 128 contiguous cells (512 B) of a row.
# - Each cell of u_in comes from DRAM about once per step (the 8 B/cell model): the program loads
#   the BY + 2 rows y0-1 .. y0+BY once each (LDG.128), so the y-neighbours are registers; only the
#   2 halo rows per BY rows are re-read (L2 hits: the neighbouring row bands run at the same time).
# - x-neighbours: a thread's own 4 cells are split in registers (tl.reshape + tl.split, no data
#   movement); for the cells at the two ends of its group it loads the aligned 4-cell groups left
#   and right, of which the compiler keeps one 4-byte load each (L1 hits: the neighbouring lanes'
#   lines). Per thread and 8 rows: 10 LDG.128 + 16 LDG.32 + 8 STG.128 (SASS checked, 93 registers,
#   no spills, no shared memory on this path).
# - Every load of the program is issued before its first store (all loads are written first; the
#   compiler cannot reorder loads above stores itself, since u_in and u_out may alias for it).
# - 16-byte vectors need nx % 4 == 0, which kevo cannot tell Triton (integers are not
#   specialised): the kernel branches once on nx % 4 == 0 (every size of every profile) and there
#   passes nx as (nx // 4) * 4, which Triton's alignment analysis knows is a multiple of 4. Other
#   nx run the same code with plain nx (4-byte accesses).
# - Alternating sweep direction (REV, as best.cu): when u_in sits above u_out (every other launch
#   of the ping-pong) the row bands are visited bottom-up, so each step starts on the rows the
#   previous step wrote last, still in the 50 MB L2. REV=0 turns it off.
# - 32-bit offsets from a 64-bit per-program base pointer.
# The vector path needs BX >= 128 * num_warps (4 cells per thread); smaller tiles are correct but
# scalar.
# Not yet measured on a GPU. Expected: well ahead of the Triton seed (4-byte accesses, five
# global loads per cell, a 64 x 4 tile) and close to tasks/heat2d/best.cu (0.85-0.91 of the
# static ceiling on the H200), perhaps a few percent below it (aligned-group loads instead of
# warp shuffles for the x-neighbours).
# kevo: tune BX 512 1024 256
# kevo: tune BY 8 4 2 16
# kevo: tune REV 1 0
# kevo: tune num_warps 4 8 2
# kevo: launch heat_step block=BX,BY
import triton
import triton.language as tl


@triton.jit
def heat_rows(u_in, u_out, nx, ny, alpha, bx, by, BX: tl.constexpr, BY: tl.constexpr):
    # The tile of columns bx*BX .. +BX and rows by*BY .. +BY; nx is the true nx or, where that is a
    # multiple of 4, (nx // 4) * 4 (known to Triton as a multiple of 4).
    x0 = bx * BX
    y0 = by * BY
    xr = tl.arange(0, BX)
    x = x0 + xr
    base = y0.to(tl.int64) * nx + x0
    src = u_in + base
    dst = u_out + base
    col_in = x < nx
    w_in = (x >= 4) & (x < nx + 4)  # the address loaded is x - 4
    e_in = x + 4 < nx
    G: tl.constexpr = BX // 4
    # every load of the program first: rows y0-1 .. y0+BY, and per row the aligned groups of 4
    # cells left and right of each group (their edge cells are the x-neighbours)
    rows = (tl.load(src - nx + xr, mask=col_in & (y0 >= 1) & (y0 - 1 < ny), other=0.0),)
    wes = ()
    for r in tl.static_range(BY + 1):
        rows = rows + (tl.load(src + r * nx + xr, mask=col_in & (y0 + r < ny), other=0.0),)
    for r in tl.static_range(BY):
        ok = y0 + r < ny
        wes = wes + (tl.load(src + r * nx + xr - 4, mask=w_in & ok, other=0.0),
                     tl.load(src + r * nx + xr + 4, mask=e_in & ok, other=0.0))
    interior_x = (x >= 1) & (x + 1 < nx)
    for r in tl.static_range(BY):
        y = y0 + r
        c = rows[r + 1]
        # [G, 2, 2] holds cell 4g + 2p + q at [g, p, q]; tl.split splits q (even / odd cells), then p
        vev, vod = tl.split(tl.reshape(rows[r] + rows[r + 2], [G, 2, 2]))  # north + south
        v0, v2 = tl.split(vev)
        v1, v3 = tl.split(vod)
        cev, cod = tl.split(tl.reshape(c, [G, 2, 2]))
        c0, c2 = tl.split(cev)
        c1, c3 = tl.split(cod)
        wev, wod = tl.split(tl.reshape(wes[2 * r], [G, 2, 2]))
        wx, w0 = tl.split(wod)  # cell 3 of the group on the left: west of cell 0
        eev, eod = tl.split(tl.reshape(wes[2 * r + 1], [G, 2, 2]))
        e3, ex = tl.split(eev)  # cell 0 of the group on the right: east of cell 3
        o0 = c0 + alpha * (w0 + c1 + v0 - 4.0 * c0)
        o1 = c1 + alpha * (c0 + c2 + v1 - 4.0 * c1)
        o2 = c2 + alpha * (c1 + c3 + v2 - 4.0 * c2)
        o3 = c3 + alpha * (c2 + e3 + v3 - 4.0 * c3)
        # Dirichlet: boundary cells keep their value.
        stepped = tl.reshape(tl.join(tl.join(o0, o2), tl.join(o1, o3)), [BX])
        interior = interior_x & (y >= 1) & (y + 1 < ny)
        tl.store(dst + r * nx + xr, tl.where(interior, stepped, c), mask=col_in & (y < ny))


@triton.jit
def heat_step(u_in, u_out, nx, ny, alpha, BX: tl.constexpr, BY: tl.constexpr, REV: tl.constexpr):
    nxs = nx.to(tl.int32)
    nys = ny.to(tl.int32)
    bx = tl.program_id(0)
    by = tl.program_id(1)
    if REV:
        # every other launch of the ping-pong: bottom-up, starting where the last step ended
        if u_in.to(tl.int64) > u_out.to(tl.int64):
            by = tl.num_programs(1) - 1 - by
    if nxs % 4 == 0:
        heat_rows(u_in, u_out, (nxs // 4) * 4, nys, alpha, bx, by, BX, BY)
    else:
        heat_rows(u_in, u_out, nxs, nys, alpha, bx, by, BX, BY)
