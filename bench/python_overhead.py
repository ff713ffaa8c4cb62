#!/usr/bin/env python3
"""The usual Python route to evaluating one candidate kernel, timed for comparison with kevo's
evaluator (`kevo_bench_eval`): CuPy RawModule (NVRTC) compiles the task's seed, every
in-distribution size of the paper profile is uploaded, run once and compared with a NumPy
reference (computed once per size and cached, as kevo caches its references) at the task's rule,
then timed with CUDA events (3 warm-ups, 10 timed runs, the state restored before each). One task
of every regime: saxpy (R0), heat2d (R1), nbody (R2), lbm (R3), lj (R4), gradshaf (R5), fft3d (R6),
adi3d (R7), each with the seed kernel and the launch plan of tasks/<t>/<t>.cpp (buffers, launches
per run, grid and block, ping-pong). kevo does strictly more per candidate: a static scan, two
correctness trials per size (one with perturbed constants), guard zones, NaN poisoning, input
checks, an L2 flush before every timed run and a re-check of the last timed output.

Usage: python_overhead.py [--runs N] [--json FILE] [--tasks saxpy,heat2d,...]   (run from the repo root)
Each run's source differs by a comment, so every run compiles; the first run (cold) is reported apart.

python_overhead.py --validate-with-pyopencl [--tasks ...] checks the NumPy references without a GPU:
it runs each task's OpenCL seed (tasks/<t>/seed.cl) through PyOpenCL (e.g. on PoCL) with the same
launch plan and checks its output against the reference, and checks that the unrun initial state
fails; then it runs one evaluation per task (smallest size) through the measured flow. A
development check only; the GPU machine needs CuPy, not PyOpenCL.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

WARMUP, REPEAT = 3, 10
U32, F32 = np.uint32, np.float32


def blocks(cells, block):
    return (cells + block - 1) // block


# ---- routes: where the kernels run -------------------------------------------------------------

class CupyRoute:
    """CUDA through CuPy: the route that is timed."""
    suffix = "cu"

    def __init__(self):
        try:
            import cupy
        except ImportError as e:  # the comparison needs CuPy; say so plainly
            sys.exit(f"python_overhead.py: CuPy is not installed ({e})")
        self.cp = cupy
        self.start, self.stop = cupy.cuda.Event(), cupy.cuda.Event()

    def describe(self):
        name = self.cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        return f"CuPy {self.cp.__version__} RawModule, NumPy reference, CUDA events, on {name}"

    def compile(self, source, names):
        module = self.cp.RawModule(code=source)
        return {n: module.get_function(n) for n in names}  # get_function forces the compile

    def to_device(self, host):
        return self.cp.asarray(host)

    def empty(self, shape, dtype):
        return self.cp.empty(shape, dtype)

    def copy(self, dst, src):
        dst[...] = src

    def to_host(self, device):
        return self.cp.asnumpy(device)

    def launch(self, fn, grid, block, args):
        fn(grid, block, args)

    def timed(self, run):
        self.start.record()
        run()
        self.stop.record()
        self.stop.synchronize()
        return self.cp.cuda.get_elapsed_time(self.start, self.stop) * 1e-3


class OpenclRoute:
    """OpenCL through PyOpenCL (PoCL on a CPU will do): validates the references, is not timed."""
    suffix = "cl"

    def __init__(self):
        try:
            import pyopencl
            import pyopencl.array
        except ImportError as e:
            sys.exit(f"python_overhead.py: --validate-with-pyopencl needs PyOpenCL (pip install pyopencl): {e}")
        self.cl = pyopencl
        self.ctx = pyopencl.create_some_context(interactive=False)
        self.queue = pyopencl.CommandQueue(self.ctx)

    def describe(self):
        return f"PyOpenCL {self.cl.VERSION_TEXT} on {self.ctx.devices[0].name}"

    def compile(self, source, names):
        program = self.cl.Program(self.ctx, source).build()
        return {n: getattr(program, n) for n in names}

    def to_device(self, host):
        return self.cl.array.to_device(self.queue, np.ascontiguousarray(host))

    def empty(self, shape, dtype):
        return self.cl.array.empty(self.queue, shape, dtype)

    def copy(self, dst, src):
        self.cl.enqueue_copy(self.queue, dst.data, src.data, byte_count=src.nbytes)

    def to_host(self, device):
        return device.get()

    def launch(self, fn, grid, block, args):
        size = tuple(g * b for g, b in zip(grid, block))
        fn(self.queue, size, tuple(block), *[a.data if hasattr(a, "data") and hasattr(a, "queue") else a for a in args])
        self.queue.finish()

    def timed(self, run):  # wall time: only the flow is exercised on this route
        start = time.perf_counter()
        run()
        self.queue.finish()
        return time.perf_counter() - start


# ---- checks at the tasks' rules ------------------------------------------------------------------

class Check:
    """The outcome of a task's check: `why` is None when it passed; `ratio` is the worst error over the tolerance."""

    def __init__(self, ratio, why=None):
        self.ratio, self.why = ratio, why


def max_abs_check(got, want, abs_tol, rel_tol, rel_floor=0.0):
    """Every value finite and |got - want| <= abs + rel * max(floor, max|want|) (kevo's check_max_abs)."""
    got = np.asarray(got, dtype=np.float64).ravel()
    want = np.asarray(want, dtype=np.float64).ravel()
    if got.shape != want.shape:
        return Check(np.inf, f"{got.size} values, expected {want.size}")
    if not np.isfinite(got).all():
        return Check(np.inf, f"{np.count_nonzero(~np.isfinite(got))} values are NaN or Inf")
    tolerance = abs_tol + rel_tol * max(rel_floor, float(np.abs(want).max()))
    worst = int(np.abs(got - want).argmax())
    error = abs(got[worst] - want[worst])
    return Check(error / tolerance, None if error <= tolerance else f"max |err| {error:.3g} at [{worst}] > {tolerance:.3g}")


# ---- the tasks -----------------------------------------------------------------------------------
# Each: `kernels`, `sizes` (the paper profile's in-distribution sizes), __init__(size) builds the
# inputs and the reference, setup() uploads, restore() resets the state before a run, run() issues
# one run's launches, results() are the checked buffers, check(their host copies) is a Check.

class Problem:
    def __init__(self, size):
        self.size = size
        self.rng = np.random.default_rng(1)

    def label(self):
        return "x".join(str(v) for v in self.size)


class Saxpy(Problem):
    kernels = ["saxpy"]
    sizes = [(1 << 20,), (1 << 24,), (1 << 26,)]

    def __init__(self, size):
        super().__init__(size)
        (self.n,) = size
        self.x = self.rng.standard_normal(self.n, dtype=np.float32)
        self.y = self.rng.standard_normal(self.n, dtype=np.float32)
        self.a = F32(2.5)
        self.expected = [(np.float64(self.a) * self.x + self.y).astype(np.float32)]
        self.initial = [self.y]

    def setup(self, route):
        self.dx, self.y0 = route.to_device(self.x), route.to_device(self.y)
        self.dy = route.empty(self.y.shape, np.float32)

    def restore(self, route):
        route.copy(self.dy, self.y0)

    def run(self, route, fns):
        route.launch(fns["saxpy"], (blocks(self.n, 256),), (256,), (self.dx, self.dy, self.a, U32(self.n)))

    def results(self):
        return [self.dy]

    def check(self, got):
        return max_abs_check(got[0], self.expected[0], 0, 1e-5, 1.0)


class PingPong(Problem):
    """A state in buffer A, an output B, one launch per step alternating A->B, B->A."""

    def setup(self, route):
        self.state = route.to_device(self.initial_state)
        self.bufs = [route.empty(self.initial_state.shape, self.initial_state.dtype) for _ in range(2)]

    def restore(self, route):
        route.copy(self.bufs[0], self.state)

    def results(self):
        return [self.bufs[self.launch_count() % 2]]

    def launch_count(self):
        return self.steps

    @property
    def initial(self):
        return [self.initial_state]


def heat_reference(u, steps, alpha):
    u = u.astype(np.float64)
    for _ in range(steps):
        v = u.copy()
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1])
        u = v
    return u


class Heat2d(PingPong):
    kernels = ["heat_step"]
    sizes = [(256, 256, 50), (512, 512, 100), (1024, 1024, 50)]

    def __init__(self, size):
        super().__init__(size)
        self.nx, self.ny, self.steps = size
        self.alpha = F32(0.2)
        u = self.rng.random((self.ny, self.nx), dtype=np.float32)
        u[0, :] = u[-1, :] = u[:, 0] = u[:, -1] = 0
        self.initial_state = u
        self.expected = [heat_reference(u, self.steps, np.float64(self.alpha))]

    def run(self, route, fns):
        grid = (blocks(self.nx, 16), blocks(self.ny, 16))
        for s in range(self.steps):
            a, b = self.bufs[s % 2], self.bufs[(s + 1) % 2]
            route.launch(fns["heat_step"], grid, (16, 16), (a, b, U32(self.nx), U32(self.ny), self.alpha))

    def check(self, got):
        return max_abs_check(got[0], self.expected[0], 1e-4, 1e-5)


class Nbody(Problem):
    kernels = ["nbody_step"]
    sizes = [(256,), (1024,), (2048,)]
    steps = 10

    def __init__(self, size):
        super().__init__(size)
        (self.n,) = size
        n = self.n
        self.pos = np.zeros((n, 4), np.float32)
        self.vel = np.zeros((n, 4), np.float32)
        self.pos[:, :3] = self.rng.uniform(-1, 1, (n, 3))
        self.vel[:, :3] = self.rng.uniform(-0.01, 0.01, (n, 3))
        self.mass = self.rng.uniform(0.5, 1.5, n).astype(np.float32)
        self.dt, self.eps, self.g = F32(1e-3), F32(0.05), F32(1.0)
        self.expected = [self.reference()]
        self.initial = [self.pos]

    def reference(self):
        p = self.pos[:, :3].astype(np.float64)
        v = self.vel[:, :3].astype(np.float64)
        m = self.mass.astype(np.float64)
        dt, eps2, g = np.float64(self.dt), np.float64(self.eps) ** 2, np.float64(self.g)
        for _ in range(self.steps):
            d = p[None, :, :] - p[:, None, :]  # d[i, j] = p_j - p_i
            r2 = (d * d).sum(-1) + eps2
            a = ((m[None, :] / (r2 * np.sqrt(r2)))[:, :, None] * d).sum(1)
            v += g * a * dt
            p += v * dt
        out = self.pos.copy()
        out[:, :3] = p
        return out

    def setup(self, route):
        self.pos0, self.vel0 = route.to_device(self.pos), route.to_device(self.vel)
        self.dmass = route.to_device(self.mass)
        self.p = [route.empty(self.pos.shape, np.float32) for _ in range(2)]
        self.v = [route.empty(self.vel.shape, np.float32) for _ in range(2)]

    def restore(self, route):
        route.copy(self.p[0], self.pos0)
        route.copy(self.v[0], self.vel0)

    def run(self, route, fns):
        for s in range(self.steps):
            i, o = s % 2, (s + 1) % 2
            route.launch(fns["nbody_step"], (blocks(self.n, 128),), (128,),
                         (self.p[i], self.p[o], self.v[i], self.v[o], self.dmass, U32(self.n), self.dt, self.eps, self.g))

    def results(self):
        return [self.p[self.steps % 2]]

    def check(self, got):
        return max_abs_check(got[0], self.expected[0], 1e-3, 1e-3)


LBM_CX = np.array([0, 1, 0, -1, 0, 1, -1, -1, 1])
LBM_CY = np.array([0, 0, 1, 0, -1, 1, 1, -1, -1])
LBM_W = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)


def lbm_equilibrium(rho, ux, uy):
    cu = LBM_CX[:, None, None] * ux + LBM_CY[:, None, None] * uy
    return LBM_W[:, None, None] * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * (ux * ux + uy * uy))


class Lbm(PingPong):
    kernels = ["lbm_step"]
    sizes = [(64, 64, 50), (128, 128, 100), (256, 256, 100)]

    def __init__(self, size):
        super().__init__(size)
        self.nx, self.ny, self.steps = size
        self.tau = F32(0.8)
        # A density bump at rest in equilibrium (kevo's nominal trial).
        y, x = np.mgrid[0:self.ny, 0:self.nx].astype(np.float64)
        sigma = 0.15 * min(self.nx, self.ny)
        rho = 1 + 0.05 * np.exp(-((x - 0.5 * self.nx) ** 2 + (y - 0.5 * self.ny) ** 2) / (2 * sigma * sigma))
        self.initial_state = lbm_equilibrium(rho, 0.0, 0.0).astype(np.float32)  # (9, ny, nx)
        self.expected = [self.reference()]

    def reference(self):
        f = self.initial_state.astype(np.float64)
        inv_tau = 1 / np.float64(self.tau)
        for _ in range(self.steps):
            # Pull streaming: population k at (x, y) comes from (x - cx, y - cy), periodically.
            f = np.stack([np.roll(f[k], (LBM_CY[k], LBM_CX[k]), axis=(0, 1)) for k in range(9)])
            rho = f.sum(0)
            ux = (LBM_CX[:, None, None] * f).sum(0) / rho
            uy = (LBM_CY[:, None, None] * f).sum(0) / rho
            f = f - (f - lbm_equilibrium(rho, ux, uy)) * inv_tau
        return f

    def run(self, route, fns):
        grid = (blocks(self.nx, 16), blocks(self.ny, 16))
        for s in range(self.steps):
            a, b = self.bufs[s % 2], self.bufs[(s + 1) % 2]
            route.launch(fns["lbm_step"], grid, (16, 16), (a, b, U32(self.nx), U32(self.ny), self.tau))

    def check(self, got):
        return max_abs_check(got[0], self.expected[0], 5e-4, 1e-4)


class Lj(Problem):
    kernels = ["lj_clear_cells", "lj_build_cells", "lj_step"]
    # (k, m, L, steps): n = k^3 particles in a periodic box of side L split into m^3 cells.
    sizes = [(12, 5, 13.8, 20), (16, 7, 18.4, 15), (22, 10, 25.3, 10)]
    max_per_cell = 64
    skin = 0.6  # the reference's neighbour list reaches r_cut + skin; rebuilt once anyone moves skin/2

    def __init__(self, size):
        super().__init__(size)
        self.k, self.m, box, self.steps = size
        self.n, self.m3 = self.k ** 3, self.m ** 3
        self.box = F32(box)
        self.dt, self.rcut2 = F32(0.005), F32(2.5 * 2.5)
        # A jittered cubic lattice wrapped into [0, L); velocities up to 0.3 with zero mean.
        n, k, L = self.n, self.k, np.float64(self.box)
        i = np.arange(n)
        lattice = np.stack([i % k, (i // k) % k, i // (k * k)], 1).astype(np.float64)
        spacing = L / k
        x = lattice * spacing + 0.05 * spacing * self.rng.uniform(-1, 1, (n, 3))
        x -= L * np.floor(x / L)
        x = x.astype(np.float32)
        x[x >= self.box] = 0
        v = self.rng.uniform(-0.3, 0.3, (n, 3))
        v -= v.mean(0)
        self.pos = np.zeros((n, 4), np.float32)
        self.vel = np.zeros((n, 4), np.float32)
        self.pos[:, :3], self.vel[:, :3] = x, v
        self.expected = [self.reference()]
        self.initial = [self.pos, np.zeros(self.m3, np.uint32)]

    def pairs_within(self, p, reach):
        """Index pairs i < j closer than `reach` under the minimum image (all pairs, in row blocks)."""
        L = np.float64(self.box)
        out_i, out_j = [], []
        for start in range(0, self.n, 512):
            rows = np.arange(start, min(self.n, start + 512))
            d = p[None, :, :] - p[rows, None, :]
            d -= L * np.round(d / L)
            close = ((d * d).sum(-1) < reach * reach) & (np.arange(self.n)[None, :] > rows[:, None])
            r, j = np.nonzero(close)
            out_i.append(rows[r])
            out_j.append(j)
        return np.concatenate(out_i), np.concatenate(out_j)

    def reference(self):
        """Symplectic Euler in float64 (v' = v + F dt, r' = r + v' dt), forces from every pair within r_cut."""
        L, dt, rcut2 = np.float64(self.box), np.float64(self.dt), np.float64(self.rcut2)
        p = self.pos[:, :3].astype(np.float64)
        v = self.vel[:, :3].astype(np.float64)
        reach = np.sqrt(rcut2) + self.skin
        pi, pj = self.pairs_within(p, reach)
        built_at = p.copy()
        for _ in range(self.steps):
            if np.abs(p - built_at).max() > self.skin / 2:
                pi, pj = self.pairs_within(p, reach)
                built_at = p.copy()
            d = p[pj] - p[pi]
            d -= L * np.round(d / L)
            r2 = (d * d).sum(-1)
            inside = (r2 < rcut2) & (r2 > 1e-12)
            inv2 = np.where(inside, 1 / np.where(inside, r2, 1), 0)
            inv6 = inv2 ** 3
            fd = (-24 * (2 * inv6 * inv6 - inv6) * inv2)[:, None] * d  # the force on i from j
            force = np.stack([np.bincount(pi, fd[:, a], self.n) - np.bincount(pj, fd[:, a], self.n) for a in range(3)], 1)
            v += force * dt
            p = p + v * dt
        out = self.pos.copy()
        out[:, :3] = p
        return out

    def setup(self, route):
        self.pos0, self.vel0 = route.to_device(self.pos), route.to_device(self.vel)
        self.p = [route.empty(self.pos.shape, np.float32) for _ in range(2)]
        self.v = [route.empty(self.vel.shape, np.float32) for _ in range(2)]
        self.count = route.empty((self.m3,), np.uint32)
        self.cells = route.empty((self.m3 * self.max_per_cell,), np.uint32)

    def restore(self, route):
        route.copy(self.p[0], self.pos0)
        route.copy(self.v[0], self.vel0)

    def run(self, route, fns):
        n, m, mpc = U32(self.n), U32(self.m), U32(self.max_per_cell)
        for s in range(self.steps):
            i, o = s % 2, (s + 1) % 2
            route.launch(fns["lj_clear_cells"], (blocks(self.m3, 256),), (256,), (self.count, U32(self.m3)))
            route.launch(fns["lj_build_cells"], (blocks(self.n, 256),), (256,),
                         (self.p[i], self.count, self.cells, n, m, self.box, mpc))
            route.launch(fns["lj_step"], (blocks(self.n, 128),), (128,),
                         (self.p[i], self.p[o], self.v[i], self.v[o], self.count, self.cells, n, m, self.box,
                          self.rcut2, self.dt, mpc))

    def results(self):
        return [self.p[self.steps % 2], self.count]

    def check(self, got):
        counts = np.asarray(got[1])
        if counts.max() > self.max_per_cell:
            return Check(np.inf, f"cell overflow: a cell counts {counts.max()} particles, more than {self.max_per_cell}")
        return max_abs_check(got[0], self.expected[0], 1e-4, 0)


class Gradshaf(Problem):
    kernels = ["gradshaf_axis_reduce", "gradshaf_step"]
    sizes = [(65, 65, 30), (257, 257, 40), (513, 513, 30)]

    def __init__(self, size):
        super().__init__(size)
        self.nr, self.nz, self.steps = size
        self.rmin, self.p_axis, self.mu0, self.omega = F32(1.0), F32(200.0), F32(1.0), F32(1.0)
        self.dr, self.dz = F32(1.0 / (self.nr - 1)), F32(1.0 / (self.nz - 1))
        j, i = np.mgrid[0:self.nz, 0:self.nr].astype(np.float64)
        psi = np.sin(np.pi * j / (self.nz - 1)) * np.sin(np.pi * i / (self.nr - 1))
        psi[0, :] = psi[-1, :] = psi[:, 0] = psi[:, -1] = 0
        self.psi = psi.astype(np.float32)
        self.expected = [self.reference()]
        self.initial = [self.psi]

    def reference(self):
        psi = self.psi.astype(np.float64)
        rmin, dr, dz, p_axis, mu0, omega = (np.float64(v) for v in
                                            (self.rmin, self.dr, self.dz, self.p_axis, self.mu0, self.omega))
        r = rmin + np.arange(1, self.nr - 1) * dr
        a_w, a_e = 1 / (dr * dr) + 1 / (2 * r * dr), 1 / (dr * dr) - 1 / (2 * r * dr)
        a_ns, a_c = 1 / (dz * dz), -2 / (dr * dr) - 2 / (dz * dz)
        for _ in range(self.steps):
            c = psi[1:-1, 1:-1]
            psin = c / c.max()
            current = np.where((psin > 0) & (psin < 1), r * p_axis * 4 * psin * (1 - psin), 0)
            op = a_w * psi[1:-1, :-2] + a_e * psi[1:-1, 2:] + a_ns * (psi[:-2, 1:-1] + psi[2:, 1:-1]) + a_c * c
            nxt = psi.copy()
            nxt[1:-1, 1:-1] = c + omega * (-mu0 * r * current - op) / a_c
            psi = nxt
        return psi

    def setup(self, route):
        self.state = route.to_device(self.psi)
        self.bufs = [route.empty(self.psi.shape, np.float32) for _ in range(2)]
        self.axis = route.empty((1,), np.float32)

    def restore(self, route):
        route.copy(self.bufs[0], self.state)

    def run(self, route, fns):
        nr, nz = U32(self.nr), U32(self.nz)
        grid = (blocks(self.nr, 16), blocks(self.nz, 16))
        for s in range(self.steps):
            a, b = self.bufs[s % 2], self.bufs[(s + 1) % 2]
            route.launch(fns["gradshaf_axis_reduce"], (1,), (256,), (a, self.axis, nr, nz))
            route.launch(fns["gradshaf_step"], grid, (16, 16),
                         (a, b, self.axis, nr, nz, self.rmin, self.dr, self.dz, self.p_axis, self.mu0, self.omega))

    def results(self):
        return [self.bufs[self.steps % 2]]

    def check(self, got):
        return max_abs_check(got[0], self.expected[0], 1e-4, 1e-5)


class Fft3d(PingPong):
    kernels = ["fft3d_x", "fft3d_y", "fft3d_z"]
    sizes = [(32,), (64,), (128,)]

    def __init__(self, size):
        super().__init__(size)
        (self.n,) = size
        self.initial_state = self.rng.standard_normal((self.n, self.n, self.n, 2), dtype=np.float32)
        cube = self.initial_state[..., 0].astype(np.float64) + 1j * self.initial_state[..., 1]
        spectrum = np.fft.fftn(cube)
        self.expected = [np.stack([spectrum.real, spectrum.imag], -1)]

    def launch_count(self):
        return 3

    def run(self, route, fns):
        a, b, n = self.bufs[0], self.bufs[1], U32(self.n)
        grid = (blocks(self.n ** 3, 256),)
        route.launch(fns["fft3d_x"], grid, (256,), (a, b, n))
        route.launch(fns["fft3d_y"], grid, (256,), (b, a, n))
        route.launch(fns["fft3d_z"], grid, (256,), (a, b, n))

    def check(self, got):
        return max_abs_check(got[0], self.expected[0], 1e-3, 1e-3)


def adi_sweep(u, axis, mu):
    """One implicit sweep along `axis` of the (z, y, x) field: Thomas on every interior line (the
    endpoints enter as mu * boundary), lines that touch a face copied."""
    v = np.moveaxis(u, axis, -1)
    length, b = v.shape[-1], 1 + 2 * mu
    out = v.copy()
    cp = np.zeros(length)
    d = np.zeros_like(v)
    for j in range(1, length - 1):
        rhs = v[..., j].copy()
        if j == 1:
            rhs += mu * v[..., 0]
        if j == length - 2:
            rhs += mu * v[..., length - 1]
        den = b + (mu * cp[j - 1] if j > 1 else 0)
        cp[j] = -mu / den
        d[..., j] = (rhs + (mu * d[..., j - 1] if j > 1 else 0)) / den
    x = d[..., length - 2]
    out[..., length - 2] = x
    for j in range(length - 3, 0, -1):
        x = d[..., j] - cp[j] * x
        out[..., j] = x
    out[0], out[-1] = v[0], v[-1]
    out[:, 0], out[:, -1] = v[:, 0], v[:, -1]
    return np.moveaxis(out, -1, axis)


class Adi3d(PingPong):
    kernels = ["adi_x", "adi_y", "adi_z"]
    sizes = [(64, 64, 64, 20), (96, 96, 96, 15), (128, 128, 128, 10)]

    def __init__(self, size):
        super().__init__(size)
        self.nx, self.ny, self.nz, self.steps = size
        self.mu = F32(0.5)
        z, y, x = np.mgrid[0:self.nz, 0:self.ny, 0:self.nx].astype(np.float64)
        sigma = 0.15 * np.cbrt(self.nx * self.ny * self.nz)
        r2 = (x - 0.5 * (self.nx - 1)) ** 2 + (y - 0.5 * (self.ny - 1)) ** 2 + (z - 0.5 * (self.nz - 1)) ** 2
        u = np.exp(-r2 / (2 * sigma * sigma))
        u[0], u[-1], u[:, 0], u[:, -1], u[:, :, 0], u[:, :, -1] = 0, 0, 0, 0, 0, 0
        self.initial_state = u.astype(np.float32)
        field, mu = self.initial_state.astype(np.float64), np.float64(self.mu)
        for _ in range(self.steps):
            for axis in (2, 1, 0):  # x, y, z
                field = adi_sweep(field, axis, mu)
        self.expected = [field]

    def launch_count(self):
        return 3 * self.steps

    def run(self, route, fns):
        dims = (U32(self.nx), U32(self.ny), U32(self.nz))
        domains = {"adi_x": (self.ny, self.nz), "adi_y": (self.nx, self.nz), "adi_z": (self.nx, self.ny)}
        k = 0
        for _ in range(self.steps):
            for name in ("adi_x", "adi_y", "adi_z"):
                a, b = self.bufs[k % 2], self.bufs[(k + 1) % 2]
                grid = (blocks(domains[name][0], 32), blocks(domains[name][1], 4))
                route.launch(fns[name], grid, (32, 4), (a, b, *dims, self.mu))
                k += 1

    def check(self, got):
        return max_abs_check(got[0], self.expected[0], 1e-3, 1e-3)


TASKS = {"saxpy": Saxpy, "heat2d": Heat2d, "nbody": Nbody, "lbm": Lbm, "lj": Lj, "gradshaf": Gradshaf,
         "fft3d": Fft3d, "adi3d": Adi3d}


# ---- one candidate -------------------------------------------------------------------------------

def evaluate(route, source, problems, kernels):
    """Compile, check every size, time every size. Returns the stage times."""
    t0 = time.perf_counter()
    fns = route.compile(source, kernels)
    t1 = time.perf_counter()
    for p in problems:
        p.setup(route)
        p.restore(route)
        p.run(route, fns)
        check = p.check([route.to_host(r) for r in p.results()])
        if check.why:
            raise SystemExit(f"python_overhead.py: {type(p).__name__.lower()} {p.label()} is wrong: {check.why}")
    t2 = time.perf_counter()
    for p in problems:
        times = []
        for r in range(WARMUP + REPEAT):
            p.restore(route)
            t = route.timed(lambda: p.run(route, fns))
            if r >= WARMUP:
                times.append(t)
        p.median = statistics.median(times)
    t3 = time.perf_counter()
    return {"compile": t1 - t0, "correctness": t2 - t1, "timing": t3 - t2, "wall": t3 - t0}


def seed_source(task, suffix):
    return open(f"tasks/{task}/seed.{suffix}").read()


def measure(tasks, runs, json_path):
    route = CupyRoute()
    print(f"Python route ({route.describe()}), paper sizes, {runs} runs per task")
    print(f"{'task':8} {'cold (s)':>10} | {'wall (s)':>10} {'compile':>10} {'correct':>10} {'timing':>10}")
    out = {}
    for task in tasks:
        cls = TASKS[task]
        problems = [cls(s) for s in cls.sizes]  # references computed once, outside the runs
        seed = seed_source(task, route.suffix)
        results = [evaluate(route, seed + f"\n// python overhead run {r} {time.time_ns()}\n", problems, cls.kernels)
                   for r in range(runs)]
        warm = results[1:]
        med = {k: statistics.median(x[k] for x in warm) for k in warm[0]}
        out[task] = dict(med, cold=results[0]["wall"], runs=len(warm), profile="paper",
                         kernel=sum(p.median for p in problems) * (WARMUP + REPEAT))
        print(f"{task:8} {results[0]['wall']:10.3f} | {med['wall']:10.3f} {med['compile']:10.3f} "
              f"{med['correctness']:10.3f} {med['timing']:10.3f}", flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(out, f, indent=2)


def validate(tasks):
    """Each task's OpenCL seed against the NumPy reference at every size; the unrun state must fail."""
    route = OpenclRoute()
    print(f"validating the NumPy references with the OpenCL seeds ({route.describe()})")
    failures = 0
    for task in tasks:
        cls = TASKS[task]
        fns = route.compile(seed_source(task, route.suffix), cls.kernels)
        for size in cls.sizes:
            start = time.perf_counter()
            p = cls(size)
            p.setup(route)
            p.restore(route)
            p.run(route, fns)
            seed = p.check([route.to_host(r) for r in p.results()])
            unrun = p.check(p.initial)
            ok = seed.why is None and unrun.why is not None
            failures += not ok
            print(f"{task:8} {p.label():>16}: {'ok' if ok else 'FAILED'}, the seed's error is {seed.ratio:.3g} of the "
                  f"tolerance ({time.perf_counter() - start:.1f} s){'; seed: ' + seed.why if seed.why else ''}"
                  f"{'' if unrun.why else '; the unrun initial state passes the check'}", flush=True)
    # The measured flow once per task (compile, set-up, check, timed runs) at its smallest size.
    for task in tasks:
        cls = TASKS[task]
        smallest = cls(cls.sizes[0])
        times = evaluate(route, seed_source(task, route.suffix), [smallest], cls.kernels)
        print(f"{task:8} one evaluation at {smallest.label()} through the measured flow: {times['wall']:.2f} s",
              flush=True)
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--validate-with-pyopencl", action="store_true")
    args = ap.parse_args()
    tasks = args.tasks.split(",")
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        sys.exit(f"python_overhead.py: unknown task '{unknown[0]}'; expected some of: {', '.join(TASKS)}")
    if args.runs < 2:
        sys.exit("python_overhead.py: --runs must be at least 2 (the first run is reported apart as cold)")
    if args.validate_with_pyopencl:
        sys.exit(1 if validate(tasks) else 0)
    measure(tasks, args.runs, args.json)


if __name__ == "__main__":
    main()
