#!/usr/bin/env bash
# Behaviour unchanged, on the GPU: builds kevo from this tree and from an older one (BASE_SRC, a
# plain copy of that commit's files, e.g. `git archive <commit> | tar -x -C build-base-src`, carried
# as an ignored folder), then runs `kevo bench` of the same tasks at the large profile from each, in
# ROUNDS interleaved rounds (A B A B ...) on the same warm machine and the same calibration, and
# prints each task's seed and best times side by side with their ratio. Usage:
#   BASE_SRC=build-base-src TASKS=saxpy,heat2d,nbody,fft3d ROUNDS=2 OUT=$OUT scripts/gpu_ab_bench.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
BASE_SRC="${BASE_SRC:-build-base-src}"
TASKS="${TASKS:-saxpy,heat2d,nbody,fft3d}"
ROUNDS="${ROUNDS:-2}"
mkdir -p "$OUT/ab"
# Both builds at once (each half the cores): the build is most of a call's time.
cp -r .deps "$BASE_SRC/" 2>/dev/null
(KEVO_BUILD_TARGET=kevo OUT="$OUT/ab/new" scripts/gpu.sh build > "$OUT/ab/build-new.txt" 2>&1) &
(cd "$BASE_SRC" && KEVO_BUILD_TARGET=kevo OUT="$OUT/ab/base" scripts/gpu.sh build > "$OUT/ab/build-base.txt" 2>&1) &
wait
echo "builds done at $SECONDS s"
for bin in ./build-gpu/kevo "$BASE_SRC/build-gpu/kevo"; do
    [ -x "$bin" ] || { echo "$bin was not built:"; grep -E "error|FAILED" "$OUT"/ab/build-*.txt | head -20; exit 1; }
done
export LD_LIBRARY_PATH="$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KEVO_CACHE_DIR="$PWD/build-gpu/ab-cache"  # one calibration for both trees
for round in $(seq 1 "$ROUNDS"); do
    for side in new base; do
        bin=./build-gpu/kevo
        [ "$side" = base ] && bin="$BASE_SRC/build-gpu/kevo"
        "$bin" bench --backend cuda --profile large --tasks "$TASKS" --check-profiles none --no-peers --json \
            > "$OUT/ab/$side-$round.json" 2> "$OUT/ab/$side-$round.log"
        echo "round $round $side: exit $? at $SECONDS s"
    done
done
python3 - "$OUT/ab" "$ROUNDS" <<'PY'
import json, sys, glob, statistics
folder, rounds = sys.argv[1], int(sys.argv[2])
def times(side):
    out = {}
    for r in range(1, rounds + 1):
        try: doc = json.load(open(f"{folder}/{side}-{r}.json"))
        except Exception as e: print(f"{side}-{r}: unreadable ({e})"); continue
        for t in doc.get("tasks", []):
            for row in t.get("sizes", []):
                for kernel in ("seed", "best"):
                    s = (row.get(kernel) or {}).get("seconds")
                    if s: out.setdefault((t["task"], row["label"], kernel), []).append(s)
    return out
new, base = times("new"), times("base")
print(f"{'task':8} {'size':22} {'kernel':6} {'new ms':>10} {'base ms':>10} {'new/base':>9}")
for key in sorted(set(new) | set(base), key=str):
    n, b = new.get(key), base.get(key)
    if not n or not b: print(key, "missing on one side"); continue
    nm, bm = statistics.median(n), statistics.median(b)
    print(f"{key[0]:8} {str(key[1]):22} {key[2]:6} {nm*1e3:10.4f} {bm*1e3:10.4f} {nm/bm:9.4f}")
PY
