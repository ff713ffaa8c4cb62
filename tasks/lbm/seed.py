# lbm seed in Triton (naive on purpose): one BX x BY tile of cells per program, the nine
# populations pulled straight from global memory with the periodic wrap computed per neighbour,
# then the moments and the BGK collision. block= is the tile; the threads are num_warps x 32.
# kevo: tune BX 64 32 128
# kevo: tune BY 4 1 2 8 16
# kevo: tune num_warps 4 2 8
# kevo: launch lbm_step block=BX,BY
import triton
import triton.language as tl

W0 = tl.constexpr(0.4444444444444444)  # 4/9
W1 = tl.constexpr(0.1111111111111111)  # 1/9
W5 = tl.constexpr(0.027777777777777776)  # 1/36


@triton.jit
def lbm_step(f_in, f_out, nx, ny, tau, BX: tl.constexpr, BY: tl.constexpr):
    xs = tl.program_id(0) * BX + tl.arange(0, BX)
    ys = tl.program_id(1) * BY + tl.arange(0, BY)
    x = xs[None, :]
    y = ys[:, None]
    inside = (x < nx) & (y < ny)  # the grid is rounded up to whole tiles
    # Upstream coordinates, wrapped: population k comes from (x - CX[k], y - CY[k]).
    xw = tl.where(x == 0, nx - 1, x - 1).to(tl.int64)  # x - 1
    xe = tl.where(x == nx - 1, 0, x + 1).to(tl.int64)  # x + 1
    ysouth = tl.where(y == 0, ny - 1, y - 1).to(tl.int64) * nx  # row y - 1
    yn = tl.where(y == ny - 1, 0, y + 1).to(tl.int64) * nx  # row y + 1
    x0 = x.to(tl.int64)
    y0 = y.to(tl.int64) * nx
    plane = nx.to(tl.int64) * ny
    # CX = { 0, 1, 0, -1,  0, 1, -1, -1,  1 }, CY = { 0, 0, 1,  0, -1, 1,  1, -1, -1 }
    f0 = tl.load(f_in + 0 * plane + y0 + x0, mask=inside, other=1.0)
    f1 = tl.load(f_in + 1 * plane + y0 + xw, mask=inside, other=0.0)
    f2 = tl.load(f_in + 2 * plane + ysouth + x0, mask=inside, other=0.0)
    f3 = tl.load(f_in + 3 * plane + y0 + xe, mask=inside, other=0.0)
    f4 = tl.load(f_in + 4 * plane + yn + x0, mask=inside, other=0.0)
    f5 = tl.load(f_in + 5 * plane + ysouth + xw, mask=inside, other=0.0)
    f6 = tl.load(f_in + 6 * plane + ysouth + xe, mask=inside, other=0.0)
    f7 = tl.load(f_in + 7 * plane + yn + xe, mask=inside, other=0.0)
    f8 = tl.load(f_in + 8 * plane + yn + xw, mask=inside, other=0.0)
    rho = f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8  # 1 outside the domain: no division by zero
    ux = (f1 - f3 + f5 - f6 - f7 + f8) / rho
    uy = (f2 - f4 + f5 + f6 - f7 - f8) / rho
    usq = 1.5 * (ux * ux + uy * uy)
    out = f_out + y0 + x0
    # feq_k = W[k] rho (1 + 3 cu + 4.5 cu^2 - 1.5 usq), f_out = f - (f - feq) / tau
    feq = W0 * rho * (1.0 - usq)
    tl.store(out + 0 * plane, f0 - (f0 - feq) / tau, mask=inside)
    cu = ux
    feq = W1 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 1 * plane, f1 - (f1 - feq) / tau, mask=inside)
    cu = uy
    feq = W1 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 2 * plane, f2 - (f2 - feq) / tau, mask=inside)
    cu = -ux
    feq = W1 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 3 * plane, f3 - (f3 - feq) / tau, mask=inside)
    cu = -uy
    feq = W1 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 4 * plane, f4 - (f4 - feq) / tau, mask=inside)
    cu = ux + uy
    feq = W5 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 5 * plane, f5 - (f5 - feq) / tau, mask=inside)
    cu = uy - ux
    feq = W5 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 6 * plane, f6 - (f6 - feq) / tau, mask=inside)
    cu = -ux - uy
    feq = W5 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 7 * plane, f7 - (f7 - feq) / tau, mask=inside)
    cu = ux - uy
    feq = W5 * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
    tl.store(out + 8 * plane, f8 - (f8 - feq) / tau, mask=inside)
