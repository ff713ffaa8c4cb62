#!/usr/bin/env python3
"""Correctness margins of the suite's seed and best-known kernels on one device.

For every task, for the seed and the best-known kernel in the backend's language, runs
`kevo eval TASK FILE --sizes all --check-only --json` at each profile and input seed given, and
prints a markdown table: the smallest margin (tolerance / error over sizes, both trials and
seeds; "exact" where every error is 0), where it was found, and any failure with its verdict.
The tolerances are meant to leave every correct FP32 kernel at least 50x inside (issue 9); the
table shows the rows below that figure with a "<50" mark. Standard library only.

Example (the H200):
  python3 scripts/margins.py --kevo build/kevo --backend cuda --profiles small,paper,large \
      --seeds 1,2,3 --json margins-cuda.json
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

LANGUAGE = {"cuda": "cu", "opencl": "cl"}
KERNELS = ("seed", "best")
TARGET_MARGIN = 50.0


def parse_args():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kevo", default=os.path.join(root, "build", "kevo"), help="the kevo binary (default build/kevo)")
    p.add_argument("--backend", required=True, choices=sorted(LANGUAGE), help="cuda or opencl")
    p.add_argument("--device", help="device index, passed to kevo --device")
    p.add_argument("--profiles", default="small", help="comma-separated: small,paper,large (default small)")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated input seeds (default 1,2,3)")
    p.add_argument("--tasks", help="comma-separated task names (default: every task of `kevo tasks`)")
    p.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated: seed,best (default both)")
    p.add_argument("--root", default=root, help="the repository holding tasks/ (default: this script's)")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds per eval: kevo's candidate deadline, and the wall limit (twice this plus 60 s, "
                        "which leaves time for the CPU reference) after which the eval is killed (default 300)")
    p.add_argument("--json", metavar="FILE", help="also write every eval's summary here")
    return p.parse_args()


def split_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def task_names(kevo):
    out = subprocess.run([kevo, "tasks", "--json"], check=True, capture_output=True, text=True).stdout
    return [t["name"] for t in json.loads(out)["tasks"]]


def margin_of(check):
    """tolerance / error of one trial's check; inf when the error is 0, None when there is none."""
    error, tolerance = check.get("error"), check.get("tolerance")
    if error is None or tolerance is None or (isinstance(error, float) and math.isnan(error)):
        return None
    if error == 0:
        return math.inf
    return tolerance / error


def run_eval(args, task, path, profile, seed):
    """One eval; returns a record: verdict, per-trial checks with margins, diagnostics on failure."""
    cmd = [args.kevo, "eval", task, path, "--backend", args.backend, "--profile", profile, "--sizes", "all",
           "--check-only", "--json", "--seed", str(seed), "--timeout", str(args.timeout)]
    if args.device is not None:
        cmd += ["--device", args.device]
    record = {"task": task, "file": path, "profile": profile, "seed": seed, "checks": []}
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=2 * args.timeout + 60)
    except subprocess.TimeoutExpired:
        record.update(verdict="wall_timeout", diagnostics=f"killed after {2 * args.timeout + 60:.0f} s")
        return record
    record["seconds"] = round(time.monotonic() - start, 2)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        record.update(verdict=f"kevo_exit_{proc.returncode}", diagnostics=" | ".join(tail))
        return record
    record["verdict"] = doc.get("verdict")
    if record["verdict"] != "ok":
        record["diagnostics"] = (doc.get("diagnostics") or "").strip().splitlines()[:1]
    for size in doc.get("sizes", []):
        trials = size.get("trials") or [{"trial": "binding", "kind": size.get("error_kind"), "error": size.get("error"),
                                         "tolerance": size.get("tolerance"), "pass": size.get("correct")}]
        for t in trials:
            record["checks"].append({"size": size.get("label"), "heldout": size.get("heldout"), "trial": t.get("trial"),
                                     "kind": t.get("kind"), "error": t.get("error"), "tolerance": t.get("tolerance"),
                                     "pass": t.get("pass"), "margin": margin_of(t)})
    return record


def summarise(records):
    """The smallest margin over every check of these records, where it was, and the failures."""
    smallest, where, failures, checks = None, "", [], 0
    for r in records:
        if r["verdict"] != "ok":
            failures.append(f"{r['verdict']} ({r['profile']}, seed {r['seed']}): {' '.join(r.get('diagnostics') or [])}")
        for c in r["checks"]:
            checks += 1
            m = c["margin"]
            if m is None:
                continue
            if smallest is None or m < smallest:
                smallest = m
                where = f"{r['profile']} {c['size']}{' (held-out)' if c['heldout'] else ''}, {c['trial']}, seed {r['seed']}"
    return {"margin": smallest, "where": where, "failures": failures, "checks": checks}


def margin_text(m):
    if m is None:
        return "-"
    if math.isinf(m):
        return "exact"
    text = f"{m:.0f}" if m >= 10 else f"{m:.2g}"
    return text + (" (<50)" if m < TARGET_MARGIN else "")


def json_safe(value):
    if isinstance(value, float) and math.isinf(value):
        return "exact"
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def main():
    args = parse_args()
    ext = LANGUAGE[args.backend]
    tasks = split_list(args.tasks) if args.tasks else task_names(args.kevo)
    profiles, seeds, kernels = split_list(args.profiles), [int(s) for s in split_list(args.seeds)], split_list(args.kernels)
    rows, raw = [], []
    for task in tasks:
        for kernel in kernels:
            path = os.path.join(args.root, "tasks", task, f"{kernel}.{ext}")
            if not os.path.exists(path):
                rows.append((task, kernel, {"margin": None, "where": "", "failures": [f"{path} missing"], "checks": 0}))
                continue
            records = []
            for profile in profiles:
                for seed in seeds:
                    r = run_eval(args, task, path, profile, seed)
                    print(f"{task} {kernel} {profile} seed {seed}: {r['verdict']} "
                          f"({r.get('seconds', '-')} s)", file=sys.stderr, flush=True)
                    records.append(r)
            raw.extend(records)
            rows.append((task, kernel, summarise(records)))

    print(f"Margins (tolerance / error) on {args.backend}, profiles {','.join(profiles)}, "
          f"seeds {','.join(map(str, seeds))}; target >= {TARGET_MARGIN:.0f}\n")
    print("| task | kernel | smallest margin | where (profile size, trial, seed) | failures |")
    print("|---|---|---|---|---|")
    for task, kernel, s in rows:
        failures = "; ".join(s["failures"]).replace("|", "\\|") or "-"  # diagnostics hold |err|
        print(f"| {task} | {kernel} | {margin_text(s['margin'])} | {s['where']} | {failures} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(json_safe({"backend": args.backend, "device": args.device, "profiles": profiles, "seeds": seeds,
                                 "summary": [{"task": t, "kernel": k, **s} for t, k, s in rows], "evals": raw}),
                      f, indent=1)
    failed = any(s["failures"] for _, _, s in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
