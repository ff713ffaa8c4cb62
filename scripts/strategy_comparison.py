#!/usr/bin/env python3
"""Strategies at matched budgets against the exhaustive best of a knob space.

Reads the flat tables of `kevo export --csv DIR --study ID` (runs.csv, iterations.csv) of a study
whose cells are (task, model "tuner", strategy, seed), started from a kernel with `// kevo: tune`
knobs, plus one exhaustive run per task (model "exhaustive": one-plus-one with as many iterations as
the space has points, so the tuner visits every point). For each strategy run it takes the best
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


def space_size(path):
    """Points of the knob space declared by the kernel file's `// kevo: tune` lines."""
    size = 1
    with open(path) as f:
        for line in f:
            m = TUNE.match(line)
            if m:
                size *= len(m.group(2).split())
    return size


def read(dir_, name):
    with open(os.path.join(dir_, name), newline="") as f:
        return list(csv.DictReader(f))


def best_within(iterations, budget):
    """Best score of a correct candidate among the seed and the first `budget` evaluations."""
    best, evaluated = None, 0
    for it in sorted(iterations, key=lambda r: int(r["iteration"])):
        if it["status"] not in ("evaluated", "from"):
            continue
        if int(it["iteration"]) > 0 and it["status"] == "evaluated":
            evaluated += 1
            if evaluated > budget:
                break
        if it["verdict"] == "ok" and it["score"]:
            s = float(it["score"])
            best = s if best is None else max(best, s)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("csv_dir")
    p.add_argument("--space", action="append", default=[], metavar="TASK=FILE",
                   help="the kernel whose knobs span the task's space (the study's --from file)")
    p.add_argument("--goal", type=float, default=0.95)
    a = p.parse_args()
    spaces = {}
    for item in a.space:
        task, _, path = item.partition("=")
        if not path:
            sys.exit(f"--space {item!r}: expected TASK=FILE")
        spaces[task] = space_size(path)
    runs = read(a.csv_dir, "runs.csv")
    its = read(a.csv_dir, "iterations.csv")
    by_run = {}
    for it in its:
        by_run.setdefault(it["run_id"], []).append(it)

    exhaustive = {}
    for r in runs:
        if r["model"] == "exhaustive":
            b = best_within(by_run.get(r["run_id"], []), math.inf)
            if b is not None:
                exhaustive[r["task"]] = max(b, exhaustive.get(r["task"], 0.0))

    table = {}
    for r in runs:
        task, strategy = r["task"], r["strategy"]
        if r["model"] == "exhaustive" or task not in spaces or task not in exhaustive:
            continue
        for share in (0.25, 0.5):
            budget = max(1, int(share * spaces[task]))
            b = best_within(by_run.get(r["run_id"], []), budget)
            frac = (b or 0.0) / exhaustive[task]
            table.setdefault((task, strategy, share), []).append(frac)

    strategies = sorted({k[1] for k in table})
    print(f"Best score within 25% / 50% of the space's size in evaluations, as a fraction of the exhaustive best;"
          f" median over seeds (seeds reaching {a.goal:.0%}).\n")
    print("| task | space | exhaustive best | " + " | ".join(strategies) + " |")
    print("|---|---:|---:|" + "---|" * len(strategies))
    wins = {s: 0 for s in strategies}
    for task in sorted(spaces):
        if task not in exhaustive:
            print(f"| {task} | {spaces[task]} | no exhaustive run | " + " | ".join("-" for _ in strategies) + " |")
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
        print(f"| {task} | {spaces[task]} | {exhaustive[task]:.4f} | " + " | ".join(cells) + " |")
    print("\nTasks where the median reaches the goal within 25%: " +
          ", ".join(f"{s} {wins[s]}" for s in strategies))


if __name__ == "__main__":
    main()
