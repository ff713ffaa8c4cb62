#!/usr/bin/env python3
"""Markdown section comparing kevo's per-candidate evaluation time (kevo_bench_eval --json) with the
Python route's (bench/python_overhead.py --json): one row per task kevo measured, the Python route
beside the tasks it covers, with the ratio and whether kevo is at or below it.
Usage: overhead_table.py KEVO.json PYTHON.json"""
import json
import sys


def seconds(v):
    return f"{v:.3f}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kevo, python = (json.load(open(p)) for p in sys.argv[1:3])
    print("\n## Evaluation overhead: kevo against the Python route\n")
    print("One candidate (the task's seed, a fresh source each run so every run compiles) evaluated at every")
    print("in-distribution paper size: kevo with a warm worker (`kevo_bench_eval`), the Python route with CuPy")
    print("RawModule + NumPy reference + CUDA events (`bench/python_overhead.py`, one task of every regime),")
    print("both with cached references, 3 warm-ups and 10 timed runs per size. Medians over the warm runs, in")
    print("seconds. kevo does more per candidate: a static scan, two correctness trials per size, guard zones,")
    print("NaN poisoning, input checks, an L2 flush before every timed run and a re-check of the last timed")
    print("output. kevo/Python below 1 means kevo is faster.\n")
    print("| task | regime | kevo wall | Python wall | kevo/Python | kevo <= Python | kevo compile | Python compile "
          "| kevo check | Python check | kevo timing | Python timing | kevo other | kernel (s) |")
    print("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    covered = passed = 0
    for task, k in kevo.items():
        if "error" in k:
            print(f"| {task} | | failed: {k['error'][:200]} |" + " |" * 11)
            continue
        p = python.get(task)
        cells = [task, k.get("regime", ""), seconds(k["wall"])]
        if p:
            covered += 1
            ok = k["wall"] <= p["wall"]
            passed += ok
            cells += [seconds(p["wall"]), f"{k['wall'] / p['wall']:.2f}", "yes" if ok else "**no**"]
        else:
            cells += ["-", "-", "(not covered)"]
        cells += [seconds(k["compile"]), seconds(p["compile"]) if p else "-", seconds(k["correctness"]),
                  seconds(p["correctness"]) if p else "-", seconds(k["timing"]), seconds(p["timing"]) if p else "-",
                  seconds(k.get("other", max(0.0, k["wall"] - k["compile"] - k["correctness"] - k["timing"]))),
                  f"{k['kernel']:.4f}"]
        print("| " + " | ".join(cells) + " |")
    missing = [t for t in python if t not in kevo]
    uncovered = len(kevo) - covered
    print(f"\nkevo <= Python on {passed} of the {covered} covered tasks{'' if passed == covered else ' (**not all**)'}; "
          f"{uncovered} kevo task{' has' if uncovered == 1 else 's have'} no Python twin."
          + (f" Python measured tasks kevo did not: {', '.join(missing)}." if missing else ""))


if __name__ == "__main__":
    main()
