#!/usr/bin/env python3
"""Markdown section comparing kevo's per-candidate evaluation time (kevo_bench_eval --json) with the
Python route's (bench/python_overhead.py --json). Usage: overhead_table.py KEVO.json PYTHON.json"""
import json
import sys

kevo, python = (json.load(open(p)) for p in sys.argv[1:3])
print("\n## Evaluation overhead: kevo against the Python route\n")
print("One candidate (the task's seed, a fresh source each run so every run compiles) evaluated at every")
print("in-distribution paper size: kevo with a warm worker (`kevo_bench_eval`), the Python route with CuPy")
print("RawModule + NumPy reference + CUDA events (`bench/python_overhead.py`), both with cached references,")
print("3 warm-ups and 10 timed runs per size. Medians over the warm runs, in seconds. kevo does more per")
print("candidate: a static scan, two correctness trials per size, guard zones, NaN poisoning, input")
print("checksums, an L2 flush before every timed run and a re-check of the last timed output.\n")
print("| task | kevo wall | Python wall | Python / kevo | kevo compile | Python compile | kevo check | Python check | kevo timing | Python timing |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for task in kevo:
    if task not in python:
        continue
    k, p = kevo[task], python[task]
    print(f"| {task} | {k['wall']:.3f} | {p['wall']:.3f} | {p['wall'] / k['wall']:.2f}x | {k['compile']:.3f} | {p['compile']:.3f} "
          f"| {k['correctness']:.3f} | {p['correctness']:.3f} | {k['timing']:.3f} | {p['timing']:.3f} |")
