# nbody seed in Triton (naive on purpose): BLOCK bodies per program, every other body loaded from
# global memory in tiles of TILE. Positions and velocities are x, y, z, w quadruples (float4).
# block= is the tile of bodies; the threads are num_warps x 32.
# kevo: tune BLOCK 128 64 256
# kevo: tune TILE 64 32 128
# kevo: tune num_warps 4 2 8
# kevo: launch nbody_step block=BLOCK
import triton
import triton.language as tl


@triton.jit
def nbody_step(pos_in, pos_out, vel_in, vel_out, mass, n, dt, eps, G, BLOCK: tl.constexpr, TILE: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mine = i < n  # the grid is rounded up to whole tiles
    px = tl.load(pos_in + 4 * i, mask=mine)
    py = tl.load(pos_in + 4 * i + 1, mask=mine)
    pz = tl.load(pos_in + 4 * i + 2, mask=mine)
    pw = tl.load(pos_in + 4 * i + 3, mask=mine)
    eps2 = eps * eps
    ax = tl.zeros([BLOCK], dtype=tl.float32)
    ay = tl.zeros([BLOCK], dtype=tl.float32)
    az = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, TILE):
        j = start + tl.arange(0, TILE)
        theirs = j < n
        qx = tl.load(pos_in + 4 * j, mask=theirs, other=0.0)
        qy = tl.load(pos_in + 4 * j + 1, mask=theirs, other=0.0)
        qz = tl.load(pos_in + 4 * j + 2, mask=theirs, other=0.0)
        mj = tl.load(mass + j, mask=theirs, other=0.0)  # a body past n has no mass: it adds nothing
        dx = qx[None, :] - px[:, None]
        dy = qy[None, :] - py[:, None]
        dz = qz[None, :] - pz[:, None]
        r2 = dx * dx + dy * dy + dz * dz + eps2  # j == i adds nothing: dx = dy = dz = 0
        s = mj[None, :] / (r2 * tl.sqrt(r2))
        ax += tl.sum(s * dx, axis=1)
        ay += tl.sum(s * dy, axis=1)
        az += tl.sum(s * dz, axis=1)
    vx = tl.load(vel_in + 4 * i, mask=mine) + G * ax * dt
    vy = tl.load(vel_in + 4 * i + 1, mask=mine) + G * ay * dt
    vz = tl.load(vel_in + 4 * i + 2, mask=mine) + G * az * dt
    vw = tl.load(vel_in + 4 * i + 3, mask=mine)
    tl.store(vel_out + 4 * i, vx, mask=mine)
    tl.store(vel_out + 4 * i + 1, vy, mask=mine)
    tl.store(vel_out + 4 * i + 2, vz, mask=mine)
    tl.store(vel_out + 4 * i + 3, vw, mask=mine)
    tl.store(pos_out + 4 * i, px + vx * dt, mask=mine)
    tl.store(pos_out + 4 * i + 1, py + vy * dt, mask=mine)
    tl.store(pos_out + 4 * i + 2, pz + vz * dt, mask=mine)
    tl.store(pos_out + 4 * i + 3, pw, mask=mine)
