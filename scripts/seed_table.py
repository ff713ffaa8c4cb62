#!/usr/bin/env python3
"""Prints one line per size of a `kevo eval --json` document: time, achieved rate, and the fraction
of the static and the workload-aware ceilings (used by scripts/gpu.sh and docs/results-h200.md)."""
import json
import sys

for path in sys.argv[1:]:
    d = json.load(open(path))
    head = f"{d['backend']:6} {d['task']:8} {d['profile']:5} {d['verdict']:13}"
    if d["verdict"] != "ok":
        print(head, d["diagnostics"][:300].replace("\n", " "))
        continue
    for s in d["sizes"]:
        if "seconds" not in s:
            continue
        fs = s["achieved"] / s["ceiling_static"] if s["ceiling_static"] else float("nan")
        fw = s["achieved"] / s["ceiling_workload"] if s["ceiling_workload"] else float("nan")
        label = s["label"] + (" (held-out)" if s["heldout"] else "")
        print(f"{head} {label:22} {s['seconds']*1e3:10.4f} ms {s['achieved']:10.1f} {s['unit']:7} "
              f"static {fs:6.3f}  workload {fw:6.3f}  cv {100*s.get('cv', 0):4.1f}%")
