#!/usr/bin/env python3
"""The strategy comparison re-timed side by side: every knob point a strategy run ended on (within
25% and 50% of the space's size in evaluations) and the exhaustive run's best point, evaluated again
in interleaved rounds, so that a fraction compares two points measured minutes apart on the same
machine state, not a run's best against another run's (the exhaustive best is one noisy figure, and
the device drifts between runs: fft3d's starting point measured 0.1474 in the exhaustive run and
scored below 0.95 of its 0.1544 in the islands runs).

Reads the CSV tables of the study (as strategy_comparison.py does); for each task, each round
evaluates every distinct point once (`kevo eval TASK KERNEL -D NAME=VALUE ...`, in-distribution
sizes, JSON); a point's fraction in a round is its score over the exhaustive best point's score in
the same round, and a run's fraction is the median over rounds. Prints a markdown table: per task
and strategy the median over seeds at 25% / 50% (seeds reaching the goal), the number of points
re-timed and the exhaustive best point's cv over rounds.

Usage: strategy_retime.py CSV_DIR --kevo KEVO --space TASK=KERNEL_FILE [--space ...] [--rounds 3]
       [--backend cuda] [--profile paper] [--repeat 10] [--goal 0.95] [--json FILE]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strategy_comparison import (best_within, default_point, is_exhaustive, iterations_by_run, read,  # noqa: E402
                                 space_size)


def points_to_retime(runs, by_run, spaces, defaults):
    """Per task: the exhaustive best point, and (strategy, seed, share) -> the point each study run
    ended on within that share of the space."""
    exhaustive, found = {}, {}
    for r in runs:
        task = r["task"]
        if task not in spaces:
            continue
        its = by_run.get(r["run_id"], [])
        if is_exhaustive(r):
            score, point = best_within(its, math.inf, defaults[task])
            if point is not None and (task not in exhaustive or score > exhaustive[task][0]):
                exhaustive[task] = (score, point)
        elif r["study_id"]:
            for share in (0.25, 0.5):
                # None: the run's best was still the task's own seed, no point of the space (fraction 0)
                _, point = best_within(its, max(1, int(share * spaces[task])), defaults[task])
                found[(task, r["strategy"], r["seed"], share)] = point
    return {t: p for t, (_, p) in exhaustive.items()}, found


def evaluate(kevo, task, kernel, point, args):
    """The in-distribution score of one knob point, or None when the evaluation gives none."""
    cmd = [kevo, "eval", task, kernel, "--backend", args.backend, "--profile", args.profile, "--sizes", "in",
           "--warmup", "1", "--repeat", str(args.repeat), "--json"]
    for setting in point.split():
        cmd += ["--define", setting]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        print(f"{task} {point}: no result (exit {done.returncode}): {done.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    if doc.get("verdict") != "ok" or doc.get("score") is None:
        print(f"{task} {point}: {doc.get('verdict')}: {(doc.get('diagnostics') or '')[:200]}", file=sys.stderr)
        return None
    return float(doc["score"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("csv_dir")
    p.add_argument("--kevo", required=True)
    p.add_argument("--space", action="append", default=[], metavar="TASK=FILE")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--profile", default="paper")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--goal", type=float, default=0.95)
    p.add_argument("--json", metavar="FILE", help="also write every re-timed score here")
    a = p.parse_args()
    if a.rounds < 1:
        sys.exit("--rounds must be at least 1")
    kernels, spaces, defaults = {}, {}, {}
    for item in a.space:
        task, _, path = item.partition("=")
        if not path or not os.path.isfile(path):
            sys.exit(f"--space {item!r}: expected TASK=FILE naming an existing kernel file")
        kernels[task], spaces[task], defaults[task] = path, space_size(path), default_point(path)
    runs = read(a.csv_dir, "runs.csv")
    by_run = iterations_by_run(a.csv_dir)
    exhaustive, found = points_to_retime(runs, by_run, spaces, defaults)

    # scores[task][point] = one score per round (None where that round's evaluation failed)
    scores = {}
    for rnd in range(a.rounds):
        for task in sorted(exhaustive):
            points = sorted({exhaustive[task]} | {pt for (t, *_), pt in found.items() if t == task and pt is not None})
            for pt in points:
                scores.setdefault(task, {}).setdefault(pt, []).append(evaluate(a.kevo, task, kernels[task], pt, a))
            print(f"round {rnd + 1}/{a.rounds}: {task}, {len(points)} points", file=sys.stderr)

    def fraction(task, pt):
        if pt is None:
            return 0.0
        ref, mine = scores[task][exhaustive[task]], scores[task][pt]
        ratios = [m / r for m, r in zip(mine, ref) if m is not None and r]
        return statistics.median(ratios) if ratios else 0.0

    strategies = sorted({k[1] for k in found})
    print(f"Re-timed side by side ({a.rounds} interleaved rounds, {a.backend}, profile {a.profile}, {a.repeat} timed"
          f" runs per size): each run's point within 25% / 50% of the space as a fraction of the exhaustive best"
          f" point in the same round; median over seeds (seeds reaching {a.goal:.0%}).\n")
    print("| task | points re-timed | exhaustive best point (cv over rounds) | " + " | ".join(strategies) + " |")
    print("|---|---:|---|" + "---|" * len(strategies))
    wins = {s: 0 for s in strategies}
    for task in sorted(exhaustive):
        ref = [v for v in scores[task][exhaustive[task]] if v is not None]
        cv = statistics.pstdev(ref) / statistics.mean(ref) if len(ref) > 1 else float("nan")
        cells = []
        for s in strategies:
            parts = []
            for share in (0.25, 0.5):
                v = [fraction(task, pt) for (t, st, _, sh), pt in found.items() if t == task and st == s and sh == share]
                if not v:
                    parts.append("-")
                    continue
                med = statistics.median(v)
                wins[s] += share == 0.25 and med >= a.goal
                parts.append(f"{med:.3f} ({sum(x >= a.goal for x in v)}/{len(v)})")
            cells.append(" / ".join(parts))
        print(f"| {task} | {len(scores[task])} | {exhaustive[task]} ({cv:.1%}) | " + " | ".join(cells) + " |")
    print("\nTasks where the median reaches the goal within 25%: " + ", ".join(f"{s} {wins[s]}" for s in strategies))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"exhaustive_point": exhaustive, "scores": scores,
                       "found": [{"task": t, "strategy": s, "seed": sd, "share": sh, "point": pt}
                                 for (t, s, sd, sh), pt in found.items()]}, f, indent=1)


if __name__ == "__main__":
    main()
