#!/usr/bin/env python3
"""One line for a `kevo eval --json` document of a knob variant: task, defines, verdict, and per
timed size the fraction of the ceiling and the median time. Usage: variant_line.py TASK DEFINES < eval.json"""
import json
import sys

task, defines = sys.argv[1], sys.argv[2]
try:
    d = json.load(sys.stdin)
except json.JSONDecodeError:
    print(f"{task:9} {defines:44} no result (timeout or crash of kevo itself)")
    sys.exit(0)
sizes = " ".join("{}={:.3f}({:.3f} ms)".format(s["label"], s["fraction"], s["seconds"] * 1e3) for s in d["sizes"] if s.get("seconds", 0) > 0)
note = d["diagnostics"][:160] if d["verdict"] != "ok" else ""
print(f"{task:9} {defines:44} {d['verdict']:10} {sizes} {note}")
