#!/usr/bin/env bash
# The strategy comparison of issue 11: the study docs/study-strategies/strategies.toml (tuner x
# three strategies x three seeds, 24 evaluations each) plus one exhaustive run per task (all 48
# points of its space, the same evaluation settings), in one SQLite store; then the comparison
# table (scripts/strategy_comparison.py), the same re-timed side by side (scripts/strategy_retime.py),
# the study's HTML report and its CSV tables.
# Usage: scripts/strategy_study.sh KEVO OUT_DIR [DEADLINE_S]  (everything stops by the deadline;
# running it again with the same OUT_DIR finishes the study: sweep resumes, exhaustive runs resume)
set -uo pipefail
KEVO=$1 OUT=$2 DEADLINE=${3:-540}
HERE=docs/study-strategies
DB="$OUT/strategies.db"
mkdir -p "$OUT"
TASKS=(nbody fft3d lj hmc morton)
started=$(date +%s)
left() { echo $((DEADLINE - 45 - ($(date +%s) - started))); }

# Exhaustive: one-plus-one over all 48 points (the tuner never proposes a point twice).
for t in "${TASKS[@]}"; do
    args=(--proposer tune --iterations 48 --db "$DB" --out "$OUT/runs" --stagnation 0 --gate-rounds 1 --gate-top 1)
    if $KEVO report "exhaustive-$t" --db "$DB" >/dev/null 2>&1; then
        cmd=(run --resume "exhaustive-$t" --db "$DB")
    else
        cmd=(run "$t" --from "$HERE/kernels/$t.cu" --run-id "exhaustive-$t" --backend cuda --profile paper
             --warmup 1 --repeat 5 --seed 1 "${args[@]}")
    fi
    timeout -s INT "$(left)" $KEVO "${cmd[@]}" > "$OUT/exhaustive-$t.log" 2>&1 &
done
timeout -s INT "$(left)" $KEVO sweep "$HERE/strategies.toml" --db "$DB" --out "$OUT/runs" > "$OUT/sweep.log" 2>&1
echo "sweep exit $?"
wait
for t in "${TASKS[@]}"; do echo "exhaustive-$t: $(tail -1 "$OUT/exhaustive-$t.log")"; done

rm -rf "$OUT/csv"
$KEVO export --all --db "$DB" --csv "$OUT/csv" > /dev/null
spaces=()
for t in "${TASKS[@]}"; do spaces+=(--space "$t=$HERE/kernels/$t.cu"); done
python3 scripts/strategy_comparison.py "$OUT/csv" "${spaces[@]}" | tee "$OUT/comparison.md"
# The points the runs found and the exhaustive best point, re-timed side by side (scripts/strategy_retime.py).
retime_s=$(( $(left) + 30 ))
if [ "$retime_s" -ge 60 ]; then
    timeout "$retime_s" python3 scripts/strategy_retime.py "$OUT/csv" --kevo "$KEVO" "${spaces[@]}" \
        --rounds "${STRATEGY_RETIME_ROUNDS:-3}" --json "$OUT/retime.json" | tee "$OUT/retime.md"
else
    echo "no time left for the side-by-side re-timing (${retime_s} s); run this script again" | tee "$OUT/retime.md"
fi
$KEVO report --study latest --db "$DB" --html "$OUT/strategies.html"
