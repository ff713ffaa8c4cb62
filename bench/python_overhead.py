#!/usr/bin/env python3
"""The usual Python route to evaluating one candidate kernel, timed for comparison with kevo's
evaluator (`kevo_bench_eval`): CuPy RawModule (NVRTC) compiles the task's seed, every
in-distribution size of the profile is run once and compared with a NumPy reference (computed
once per size and cached, as kevo caches its references), then timed with CUDA events (3 warm-ups,
10 timed runs, the state restored before each). kevo does strictly more per candidate: a static
scan, two correctness trials per size (one with perturbed constants), guard zones, NaN poisoning,
input checksums, an L2 flush before every timed run and a re-check of the last timed output.

Usage: python_overhead.py [--runs N] [--json FILE] [--tasks heat2d,saxpy]   (run from the repo root)
Each run's source differs by a comment, so every run compiles; the first run (cold) is reported apart.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

try:
    import cupy as cp
except ImportError as e:  # the comparison needs CuPy; say so plainly
    sys.exit(f"python_overhead.py: CuPy is not installed ({e})")

WARMUP, REPEAT = 3, 10
PAPER = {
    "heat2d": [(256, 256, 50), (512, 512, 100), (1024, 1024, 50)],
    "saxpy": [(1 << 20,), (1 << 24,), (1 << 26,)],
}


def heat_reference(u, steps, alpha):
    u = u.copy()
    for _ in range(steps):
        v = u.copy()
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1])
        u = v
    return u


class Heat2d:
    kernel = "heat_step"

    def __init__(self, size):
        nx, ny, self.steps = size
        self.nx, self.ny, self.alpha = nx, ny, np.float32(0.2)
        rng = np.random.default_rng(1)
        u = rng.random((ny, nx), dtype=np.float32)
        u[0, :] = u[-1, :] = u[:, 0] = u[:, -1] = 0
        self.initial = u
        self.expected = heat_reference(u, self.steps, self.alpha)
        self.tolerance = 1e-4 + 1e-5 * np.abs(self.expected).max()

    def setup(self):
        self.state = cp.asarray(self.initial)
        self.bufs = [cp.empty_like(self.state), cp.empty_like(self.state)]

    def restore(self):
        self.bufs[0][...] = self.state

    def run(self, fn):
        grid = ((self.nx + 15) // 16, (self.ny + 15) // 16)
        for s in range(self.steps):
            a, b = self.bufs[s % 2], self.bufs[(s + 1) % 2]
            fn(grid, (16, 16), (a, b, np.uint32(self.nx), np.uint32(self.ny), self.alpha))

    def result(self):
        return self.bufs[self.steps % 2]


class Saxpy:
    kernel = "saxpy"

    def __init__(self, size):
        (self.n,) = size
        rng = np.random.default_rng(1)
        self.x = rng.standard_normal(self.n, dtype=np.float32)
        self.y = rng.standard_normal(self.n, dtype=np.float32)
        self.a = np.float32(2.5)
        self.expected = self.a * self.x + self.y
        self.tolerance = 1e-5 * max(1.0, float(np.abs(self.expected).max()))

    def setup(self):
        self.dx, self.y0 = cp.asarray(self.x), cp.asarray(self.y)
        self.dy = cp.empty_like(self.y0)

    def restore(self):
        self.dy[...] = self.y0

    def run(self, fn):
        fn(((self.n + 255) // 256,), (256,), (self.dx, self.dy, self.a, np.uint32(self.n)))

    def result(self):
        return self.dy


TASKS = {"heat2d": Heat2d, "saxpy": Saxpy}


def evaluate(source, problems, kernel_name):
    """One candidate: compile, check every size, time every size. Returns the stage times."""
    t0 = time.perf_counter()
    fn = cp.RawModule(code=source).get_function(kernel_name)  # get_function forces the compile
    t1 = time.perf_counter()
    for p in problems:
        p.setup()
        p.restore()
        p.run(fn)
        got = cp.asnumpy(p.result())
        if not np.isfinite(got).all() or np.abs(got - p.expected).max() > p.tolerance:
            raise SystemExit(f"python_overhead.py: {kernel_name} is wrong at {p.__dict__.get('n', '')}")
    t2 = time.perf_counter()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for p in problems:
        times = []
        for r in range(WARMUP + REPEAT):
            p.restore()
            start.record()
            p.run(fn)
            stop.record()
            stop.synchronize()
            if r >= WARMUP:
                times.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3)
        p.median = statistics.median(times)
    t3 = time.perf_counter()
    return {"compile": t1 - t0, "correctness": t2 - t1, "timing": t3 - t2, "wall": t3 - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--tasks", default="heat2d,saxpy")
    args = ap.parse_args()
    out = {}
    print(f"Python route (CuPy {cp.__version__} RawModule, NumPy reference, CUDA events) on "
          f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, paper sizes, {args.runs} runs per task")
    print(f"{'task':8} {'cold (s)':>10} | {'wall (s)':>10} {'compile':>10} {'correct':>10} {'timing':>10}")
    for task in args.tasks.split(","):
        if task not in TASKS:
            sys.exit(f"python_overhead.py: unknown task '{task}'; expected some of: {', '.join(TASKS)}")
        seed = open(f"tasks/{task}/seed.cu").read()
        problems = [TASKS[task](s) for s in PAPER[task]]  # references computed once, outside the runs
        runs = []
        for r in range(args.runs):
            runs.append(evaluate(seed + f"\n// python overhead run {r} {time.time_ns()}\n", problems, TASKS[task].kernel))
        warm = runs[1:]
        med = {k: statistics.median(x[k] for x in warm) for k in warm[0]}
        out[task] = dict(med, cold=runs[0]["wall"], runs=len(warm), profile="paper")
        print(f"{task:8} {runs[0]['wall']:10.3f} | {med['wall']:10.3f} {med['compile']:10.3f} {med['correctness']:10.3f} {med['timing']:10.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
