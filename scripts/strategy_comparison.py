#!/usr/bin/env python3
"""Strategies at matched budgets against the exhaustive best of a knob space.

Reads the flat tables of `kevo export --csv DIR --study ID` (runs.csv, iterations.csv) of a study
whose cells are (task, model "tuner", strategy, seed), started from a kernel with `// kevo: tune`
knobs, plus one exhaustive run per task (run id "exhaustive-TASK", or a cell of model "exhaustive":
one-plus-one with as many iterations as the space has points, so the tuner visits every point; the
tuner never proposes a point twice). For each strategy run it takes the best
in-distribution score within the first 25% and 50% of the space's size in evaluations and divides it
by the exhaustive run's best; it prints a markdown table of the medians over seeds and how many
seeds reach 95%.

Usage: strategy_comparison.py CSV_DIR --space TASK=KERNEL_FILE [--space ...] [--goal 0.95]
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys

TUNE = re.compile(r"^\s*//\s*kevo:\s*tune\s+(\w+)\s+(.+?)\s*$")


def knobs(path):
    """The knob space declared by the kernel file's `// kevo: tune` lines: {name: [values]}."""
    space = {}
    with open(path) as f:
        for line in f:
            m = TUNE.match(line)
            if m:
                space[m.group(1)] = m.group(2).split()
    return space


def space_size(path):
    return math.prod(len(v) for v in knobs(path).values())


def default_point(path):
    """The starting kernel's point as the tuner writes a point: NAME=VALUE by name, first values."""
    return " ".join(f"{k}={v[0]}" for k, v in sorted(knobs(path).items()))


def point_of(it, default):
    """The knob point an iteration measured: the tuner's note starts with it; the starting kernel
    (status "from") is the default point; the task's own seed is no point of the space."""
    if it["status"] == "from":
        return default
    if it["status"] != "evaluated" or it["note"] == "seed":
        return None
    return it["note"].split(";")[0].strip()


def read(dir_, name):
    with open(os.path.join(dir_, name), newline="") as f:
        return list(csv.DictReader(f))


def iterations_by_run(dir_):
    """iterations.csv grouped by run id."""
    by_run = {}
    for it in read(dir_, "iterations.csv"):
        by_run.setdefault(it["run_id"], []).append(it)
    return by_run


def is_exhaustive(run):
    """The exhaustive run of a task: a cell of model "exhaustive" or run id "exhaustive-TASK"."""
    return run["model"] == "exhaustive" or run["run_id"].startswith("exhaustive-")


def best_within(iterations, budget, default=None):
    """Best score of a correct candidate among the seed and the first `budget` evaluations, and the
    knob point it was measured at."""
    best, point, evaluated = None, None, 0
    for it in sorted(iterations, key=lambda r: int(r["iteration"])):
        if it["status"] not in ("evaluated", "from"):
            continue
        if int(it["iteration"]) > 0 and it["status"] == "evaluated":
            evaluated += 1
            if evaluated > budget:
                break
        if it["verdict"] == "ok" and it["score"]:
            s = float(it["score"])
            if best is None or s > best:
                best, point = s, point_of(it, default)
    return best, point


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("csv_dir")
    p.add_argument("--space", action="append", default=[], metavar="TASK=FILE",
                   help="the kernel whose knobs span the task's space (the study's --from file)")
    p.add_argument("--goal", type=float, default=0.95)
    a = p.parse_args()
    spaces, defaults = {}, {}
    for item in a.space:
        task, _, path = item.partition("=")
        if not path:
            sys.exit(f"--space {item!r}: expected TASK=FILE")
        spaces[task] = space_size(path)
        defaults[task] = default_point(path)
    runs = read(a.csv_dir, "runs.csv")
    by_run = iterations_by_run(a.csv_dir)

    exhaustive, visited = {}, {}
    for r in runs:
        if is_exhaustive(r):
            visited[r["task"]] = sum(1 for it in by_run.get(r["run_id"], []) if it["status"] in ("evaluated", "from"))
            b, _ = best_within(by_run.get(r["run_id"], []), math.inf)
            if b is not None:
                exhaustive[r["task"]] = max(b, exhaustive.get(r["task"], 0.0))

    # Every measurement of every point, over all runs: the pooled median is the point's score with
    # the run-to-run noise averaged out (a run's own best is a maximum of noisy figures).
    pooled = {}
    for r in runs:
        for it in by_run.get(r["run_id"], []):
            pt = point_of(it, defaults.get(r["task"]))
            if pt is not None and it["verdict"] == "ok" and it["score"]:
                pooled.setdefault((r["task"], pt), []).append(float(it["score"]))
    pooled_median = {k: statistics.median(v) for k, v in pooled.items()}
    pooled_best = {}
    for (task, pt), m in pooled_median.items():
        pooled_best[task] = max(m, pooled_best.get(task, 0.0))

    table, found = {}, {}
    for r in runs:
        task, strategy = r["task"], r["strategy"]
        if is_exhaustive(r) or not r["study_id"] or task not in spaces or task not in exhaustive:
            continue
        for share in (0.25, 0.5):
            budget = max(1, int(share * spaces[task]))
            b, pt = best_within(by_run.get(r["run_id"], []), budget, defaults[task])
            frac = (b or 0.0) / exhaustive[task]
            table.setdefault((task, strategy, share), []).append(frac)
            found.setdefault((task, strategy, share), []).append(
                pooled_median.get((task, pt), 0.0) / pooled_best[task] if pt else 0.0)

    strategies = sorted({k[1] for k in table})
    print(f"Best score within 25% / 50% of the space's size in evaluations, as a fraction of the exhaustive best;"
          f" median over seeds (seeds reaching {a.goal:.0%}).\n")
    print("| task | space | points measured | exhaustive best | " + " | ".join(strategies) + " |")
    print("|---|---:|---:|---:|" + "---|" * len(strategies))
    wins = {s: 0 for s in strategies}
    for task in sorted(spaces):
        if task not in exhaustive:
            print(f"| {task} | {spaces[task]} | - | no exhaustive run | " + " | ".join("-" for _ in strategies) + " |")
            continue
        cells = []
        for s in strategies:
            parts = []
            for share in (0.25, 0.5):
                v = table.get((task, s, share), [])
                if not v:
                    parts.append("-")
                    continue
                med = statistics.median(v)
                parts.append(f"{med:.3f} ({sum(x >= a.goal for x in v)}/{len(v)})")
                if share == 0.25 and med >= a.goal:
                    wins[s] += 1
            cells.append(" / ".join(parts))
        print(f"| {task} | {spaces[task]} | {visited.get(task, 0)} | {exhaustive[task]:.4f} | " + " | ".join(cells) + " |")
    print("\nTasks where the median reaches the goal within 25%: " +
          ", ".join(f"{s} {wins[s]}" for s in strategies))
    print("\nThe same, by the point each run found: its pooled median (every measurement of that point in the"
          " store, all runs) over the best pooled median of the task's points; and the run-to-run noise"
          " (median cv of points measured at least 3 times).\n")
    print("| task | noise (cv) | best pooled median | " + " | ".join(strategies) + " |")
    print("|---|---:|---:|" + "---|" * len(strategies))
    for task in sorted(spaces):
        if task not in pooled_best:
            continue
        cvs = [statistics.pstdev(v) / statistics.mean(v) for (t, _), v in pooled.items() if t == task and len(v) >= 3]
        cells = []
        for s_ in strategies:
            parts = []
            for share in (0.25, 0.5):
                v = found.get((task, s_, share), [])
                parts.append(f"{statistics.median(v):.3f} ({sum(x >= a.goal for x in v)}/{len(v)})" if v else "-")
            cells.append(" / ".join(parts))
        noise = f"{statistics.median(cvs):.1%}" if cvs else "-"
        print(f"| {task} | {noise} | {pooled_best[task]:.4f} | " + " | ".join(cells) + " |")

    base = "one-plus-one"
    if base in strategies:
        for s in strategies:
            if s == base:
                continue
            ahead = [t for t in sorted(spaces)
                     if table.get((t, s, 0.25)) and table.get((t, base, 0.25))
                     and statistics.median(table[(t, s, 0.25)]) > statistics.median(table[(t, base, 0.25)])]
            level = [t for t in sorted(spaces)
                     if table.get((t, s, 0.25)) and table.get((t, base, 0.25))
                     and statistics.median(table[(t, s, 0.25)]) == statistics.median(table[(t, base, 0.25)])]
            print(f"{s} above {base}'s median within 25%: {len(ahead)} task(s) ({', '.join(ahead) or 'none'}); "
                  f"level on {len(level)} ({', '.join(level) or 'none'})")


if __name__ == "__main__":
    main()
