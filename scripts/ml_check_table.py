#!/usr/bin/env python3
"""One line per evaluation of `gpu.sh ml-check` (kevo eval --json files named
mlcheck_<task>_<kernel>_<profile>.json): the verdict and, per size, the fraction of the speed of
light, the limiter, the time and the smallest check margin (tolerance / error) over both trials."""
import json
import math
import os
import sys


def margin(size):
    worst = math.inf
    for trial in size.get("trials", []):
        err, tol = trial.get("error", 0.0), trial.get("tolerance", 0.0)
        if err and err > 0:
            worst = min(worst, tol / err)
    return "exact" if worst == math.inf else f"{worst:.3g}"


def line(path):
    name = os.path.basename(path)[len("mlcheck_"):-len(".json")]
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        return f"{name}: no result ({e.__class__.__name__})"
    head = f"{name}: {doc.get('verdict')}"
    if doc.get("verdict") != "ok":
        return head + " " + doc.get("diagnostics", "")[:300].replace("\n", " | ")
    parts = []
    for s in doc.get("sizes", []):
        frac = s.get("fraction")
        timed = f" {frac:.3f} {s.get('limiter', '')} {s.get('seconds', 0) * 1e6:.1f}us" if frac else ""
        parts.append(f"{s['label']}{'*' if s.get('heldout') else ''}{timed} m={margin(s)}")
    return head + " | " + "; ".join(parts)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(line(p))
