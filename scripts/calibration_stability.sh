#!/usr/bin/env bash
# Calibration stability benchmark (not a CI test: it needs an idle machine). Runs `kevo calibrate`
# several times in a row, each from an empty cache, and prints the DRAM bandwidth and FP32 rate of
# each with the largest relative difference between runs. Exit status 1 when they differ by more
# than the limit (default 15%). Usage: scripts/calibration_stability.sh [--runs N] [--limit 0.15]
#   [--quick] [kevo calibrate options, e.g. --backend opencl --device 0]
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO="${KEVO:-./build/kevo}"
runs=3 limit=0.15 extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        *) extra+=("$1"); shift ;;
    esac
done
[ -x "$KEVO" ] || { echo "calibration_stability.sh: $KEVO not found (build first or set KEVO)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$runs"); do
    KEVO_CACHE_DIR="$tmp/cache$i" "$KEVO" calibrate "${extra[@]}" --json > "$tmp/run$i.json" 2> "$tmp/run$i.log" ||
        { echo "run $i failed:"; cat "$tmp/run$i.log"; exit 2; }
done
python3 - "$limit" "$tmp"/run*.json <<'PY'
import json, sys
limit = float(sys.argv[1])
docs = [json.load(open(p)) for p in sys.argv[2:]]
print(f"{'run':>4} {'GB/s':>10} {'GFLOP/s':>10} {'stable':>7}  passes (GB/s; GFLOP/s)")
for i, d in enumerate(docs, 1):
    passes = ", ".join(f"{v:.1f}" for v in d["bandwidth_passes"])
    fma = ", ".join(f"{v:.1f}" for v in d["fp32_passes"])
    print(f"{i:>4} {d['bandwidth_gbs']:>10.1f} {d['fp32_gflops']:>10.1f} {str(d['stable']):>7}  {passes}; {fma}")
def spread(values):
    return (max(values) - min(values)) / min(values)
bw, fl = spread([d["bandwidth_gbs"] for d in docs]), spread([d["fp32_gflops"] for d in docs])
print(f"device: {docs[0]['device_name']}; plateau from {docs[0]['plateau_from_bytes'] / 2**20:.0f} MiB "
      f"(last-level cache {docs[0]['llc_bytes'] / 2**20:.0f} MiB)")
print(f"largest difference between runs: bandwidth {100 * bw:.1f}%, FP32 {100 * fl:.1f}% (limit {100 * limit:.0f}%)")
sys.exit(0 if bw <= limit and fl <= limit else 1)
PY
