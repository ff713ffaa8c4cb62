#!/usr/bin/env python3
"""Markdown section: the H200 goals of issue 5 against a `kevo bench --json` document.
Fractions are of the measured static ceilings (bandwidth or FP32), per size of the timed profile;
fft3d's goal is the best kernel's speed-up over cuFFT. Usage: goals_table.py BENCH.json"""
import json
import sys

GOALS = {  # task: (kind, target)
    "saxpy": ("fraction", 0.85), "heat2d": ("fraction", 0.85), "wave3d": ("fraction", 0.85),
    "morton": ("fraction", 0.85), "lbm": ("fraction", 0.85), "gradshaf": ("fraction", 0.85),
    "adi3d": ("fraction", 0.85), "nbody": ("fraction", 0.70), "ising": ("fraction", 0.35),
    "fft3d": ("cufft", 1.0), "hmc": ("fraction", None), "lj": ("fraction", None),
}

doc = json.load(open(sys.argv[1]))
print("\n## Goals (issue 5), per size of the timed profile\n")
print("| task | goal | best kernel per size (in-distribution; [h] held-out) | met |")
print("| --- | --- | --- | --- |")
for t in doc["tasks"]:
    kind, target = GOALS.get(t["task"], ("fraction", None))
    cells, met = [], True
    for s in t["sizes"]:
        b = s.get("best", {})
        if not b.get("timed"):
            cells.append(f"{s['label']}: not timed")
            met = False
            continue
        if kind == "cufft":
            peer = next((p for p in s["peers"] if p["name"] == "cuFFT" and "best_speedup" in p), None)
            value = peer["best_speedup"] if peer else None
            text = f"{value:.2f}x cuFFT" if value is not None else "cuFFT not run"
            if s["label"] in ("128x128x128", "256x256x256"):
                met &= value is not None and value >= target
        else:
            value = b["fraction_static"]
            text = f"{value:.3f}"
            if target is not None and not s["heldout"]:
                met &= value >= target
        cells.append(f"{s['label']}{' [h]' if s['heldout'] else ''}: {text}")
    goal = ("as high as possible" if target is None else
            f">= {target:.2f}x cuFFT at 128^3 and 256^3" if kind == "cufft" else f">= {target:.2f} of the ceiling")
    verdict = "-" if target is None else ("yes" if met else "**no**")
    print(f"| {t['task']} | {goal} | {'; '.join(cells)} | {verdict} |")
