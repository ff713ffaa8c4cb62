#!/usr/bin/env python3
"""Does concurrency change a sweep's measurements? Runs the same study at concurrency 1 and N
(each into its own database), then compares, cell by cell and iteration by iteration, the
verdicts (which must be equal) and the scores of the candidates both runs evaluated: the relative
score difference against the measured spread of those evaluations (per size, (max - min) / median
of the timed runs, and their coefficient of variation; the largest over sizes and the two runs).
Prints a table and a summary line; exits 1 when a verdict differs. Standard library only.

Example (the H200; a study of tune cells on the GPU):
  python3 scripts/sweep_noise.py --kevo build-gpu/kevo --backend cuda --tasks saxpy,heat2d \
      --seeds 1,2,3,4 --iterations 6 --concurrency 4 --out gpu-out/sweep-noise
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time


def write_study(path, args, concurrency):
    tasks = ", ".join(f'"{t}"' for t in args.tasks.split(","))
    seeds = ", ".join(args.seeds.split(","))
    with open(path, "w") as f:
        f.write(f'name = "noise"\nbackend = "{args.backend}"\ndevice = {args.device}\n')
        if args.profile:
            f.write(f'profile = "{args.profile}"\n')
        f.write(f"tasks = [{tasks}]\nseeds = [{seeds}]\nconcurrency = {concurrency}\n")
        f.write(f"[budget]\niterations = {args.iterations}\n[run]\nrepeat = {args.repeat}\ngate_rounds = 1\n")
        f.write('[[models]]\nname = "tuner"\nproposer = "tune"\n')


def evaluations(db):
    """{cell: {iteration: (candidate hash, verdict, score, spread, cv)}}"""
    con = sqlite3.connect(db)
    out = {}
    rows = con.execute(
        "SELECT c.cell, i.iteration, k.hash, i.verdict, i.score, i.result FROM study_cells c "
        "JOIN iterations i ON i.run_id = c.run_id LEFT JOIN candidates k ON k.id = i.candidate_id")
    for cell, iteration, digest, verdict, score, result in rows:
        spread, cv = None, None
        if result:
            sizes = [s for s in json.loads(result).get("sizes", []) if s.get("timed") and not s.get("heldout")]
            spreads = [(s["seconds_max"] - s["seconds_min"]) / s["seconds"] for s in sizes if s.get("seconds")]
            spread = max(spreads) if spreads else None
            cv = max((s.get("cv", 0.0) for s in sizes), default=None)
        out.setdefault(cell, {})[iteration] = (digest, verdict, score, spread, cv)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kevo", default="build/kevo")
    p.add_argument("--backend", default="opencl")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--profile", default="")
    p.add_argument("--tasks", default="saxpy")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--iterations", type=int, default=4)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--concurrency", type=int, default=3)
    p.add_argument("--out", default="sweep-noise")
    p.add_argument("--reuse", action="store_true", help="compare the databases already in --out; run nothing")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results, seconds = {}, {}
    for level in (1, args.concurrency):
        study, db = f"{args.out}/noise-c{level}.toml", f"{args.out}/noise-c{level}.db"
        if args.reuse:
            seconds[level] = float("nan")
            results[level] = evaluations(db)
            continue
        for stale in (db, db + "-wal", db + "-shm"):
            if os.path.exists(stale):
                os.remove(stale)
        write_study(study, args, level)
        start = time.monotonic()
        done = subprocess.run([args.kevo, "sweep", study, "--db", db, "--out", f"{args.out}/runs"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"kevo sweep at concurrency {level} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        seconds[level] = time.monotonic() - start
        results[level] = evaluations(db)
    one, many = results[1], results[args.concurrency]
    verdict_changes, diffs, beyond = 0, [], 0
    print(f"| cell | iteration | verdict | score c=1 | score c={args.concurrency} | difference | spread | cv |")
    print("|---|---|---|---|---|---|---|---|")
    for cell in sorted(one):
        for it in sorted(one[cell]):
            a, b = one[cell][it], many.get(cell, {}).get(it)
            if b is None or a[1] != b[1]:
                verdict_changes += 1
                print(f"| {cell} | {it} | {a[1]} vs {b[1] if b else 'absent'} (CHANGED) | | | | |")
                continue
            if a[0] != b[0] or a[2] is None or b[2] is None:
                continue  # another candidate (the search went another way) or no score
            diff = abs(a[2] - b[2]) / ((a[2] + b[2]) / 2)
            spread = max(x for x in (a[3], b[3], 0.0) if x is not None)
            cv = max(x for x in (a[4], b[4], 0.0) if x is not None)
            diffs.append((diff, spread, cv))
            beyond += diff > spread
            print(f"| {cell} | {it} | {a[1]} | {a[2]:.4f} | {b[2]:.4f} | {100 * diff:.1f}% | {100 * spread:.1f}% "
                  f"| {100 * cv:.1f}% |")
    if diffs:
        print(f"\n{len(diffs)} scores compared: median difference {100 * statistics.median(d[0] for d in diffs):.1f}%, "
              f"median spread {100 * statistics.median(d[1] for d in diffs):.1f}%, median cv "
              f"{100 * statistics.median(d[2] for d in diffs):.1f}%; {beyond} beyond their spread; "
              f"{verdict_changes} verdicts changed")
    else:
        print(f"\nno scores to compare; {verdict_changes} verdicts changed")
    print(f"wall time: {seconds[1]:.0f} s at concurrency 1, {seconds[args.concurrency]:.0f} s at {args.concurrency}")
    sys.exit(1 if verdict_changes else 0)


if __name__ == "__main__":
    main()
