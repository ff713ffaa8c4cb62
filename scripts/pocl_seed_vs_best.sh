#!/usr/bin/env bash
# Seed against best-known OpenCL kernel on a CPU OpenCL device (PoCL), the table of
# docs/best-kernels.md: per task, ROUNDS interleaved rounds of `kevo eval --repeat 10` (seed, best,
# seed, best, ...; exactly 10 timed runs each, --max-repeat 10, so a round's cost is fixed) at the
# small profile's in-distribution sizes; per size the median over rounds of
# each kernel's time, and the speed-up as the median of the per-round ratios seed/best with their
# range (a round's two runs are adjacent, so they share the machine's load).
# Usage: scripts/pocl_seed_vs_best.sh [--rounds N] [--tasks t1,t2,...] [--profile P] [--json-dir DIR]
#        [--define NAME=VALUE ...]   (passed to the best kernel's eval only)
#        [--summary-only]            (no evals: tabulate the documents already in --json-dir)
# Environment: KEVO (default ./build/kevo), KEVO_CACHE_DIR as for kevo.
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO="${KEVO:-./build/kevo}"
rounds=6 profile=small tasks="" json_dir="" best_defs=() summary_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --tasks) tasks=$2; shift 2 ;;
        --profile) profile=$2; shift 2 ;;
        --json-dir) json_dir=$2; shift 2 ;;
        --define) best_defs+=(--define "$2"); shift 2 ;;
        --summary-only) summary_only=1; shift ;;
        *) echo "pocl_seed_vs_best.sh: unknown argument '$1' (accepted: --rounds N, --tasks LIST, --profile P, --json-dir DIR, --define NAME=VALUE, --summary-only)" >&2; exit 2 ;;
    esac
done
[ -x "$KEVO" ] || { echo "pocl_seed_vs_best.sh: $KEVO not found (build first or set KEVO)" >&2; exit 2; }
[ -n "$tasks" ] || tasks=$(ls tasks | while read -r t; do [ -f "tasks/$t/best.cl" ] && printf '%s,' "$t"; done)
[ "$summary_only" = 0 ] || [ -n "$json_dir" ] || { echo "pocl_seed_vs_best.sh: --summary-only needs --json-dir" >&2; exit 2; }
if [ -z "$json_dir" ]; then
    json_dir=$(mktemp -d)
    trap 'rm -rf "$json_dir"' EXIT
fi
mkdir -p "$json_dir"

for task in ${tasks//,/ }; do
    [ "$summary_only" = 0 ] || break
    for r in $(seq 1 "$rounds"); do
        for kind in seed best; do
            defs=()
            [ "$kind" = best ] && defs=("${best_defs[@]}")
            out="$json_dir/$task.$kind.$r.json"
            "$KEVO" eval "$task" "tasks/$task/$kind.cl" --backend opencl --profile "$profile" --repeat 10 --max-repeat 10 \
                ${defs[@]+"${defs[@]}"} --json > "$out" 2> "$json_dir/$task.$kind.$r.log" || true
        done
    done
done

python3 - "$rounds" "$json_dir" ${tasks//,/ } <<'PY'
import json, statistics, sys
rounds, json_dir, tasks = int(sys.argv[1]), sys.argv[2], sys.argv[3:]

def load(task, kind, r):
    d = json.load(open(f"{json_dir}/{task}.{kind}.{r}.json"))
    if d["verdict"] != "ok":
        sys.exit(f"{task} {kind} round {r}: verdict {d['verdict']}: {d.get('diagnostics', '')[:300]}")
    return {s["label"]: s["seconds"] for s in d["sizes"] if "seconds" in s and not s["heldout"]}

def fmt(ms):
    return f"{ms:.3g}"

print(f"median of {rounds} interleaved rounds; speed-up = median of per-round seed/best (range)")
print("| task | seed -> best (ms), per size | speed-up per size (range) |")
print("| --- | --- | --- |")
for task in tasks:
    seed = [load(task, "seed", r) for r in range(1, rounds + 1)]
    best = [load(task, "best", r) for r in range(1, rounds + 1)]
    times, gains = [], []
    for label in seed[0]:
        s = statistics.median(x[label] for x in seed) * 1e3
        b = statistics.median(x[label] for x in best) * 1e3
        ratios = [x[label] / y[label] for x, y in zip(seed, best)]
        times.append(f"{label}: {fmt(s)} -> {fmt(b)}")
        gains.append(f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})")
    print(f"| {task} | {', '.join(times)} | {', '.join(gains)} |")
PY
