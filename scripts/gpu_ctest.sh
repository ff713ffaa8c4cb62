#!/usr/bin/env bash
# The whole ctest of a build tree on a many-core GPU host, inside the time one device call allows,
# resumable across calls. Two groups run at once on their own cores:
#   - tests that judge speed on PoCL's CPU device (a search promoting a faster kernel, the noise
#     rule, a run killed after its second iteration, calibration, the report's store): one at a
#     time on the first four cores, PoCL told to use four (a quiet 4-core machine, more than CI's
#     two), since fifteen neighbours on the same cores make them measure noise, not kevo;
#   - every other test on the remaining cores, -j(cores), PoCL told to use two threads each: many of
#     them wait on the GPU or a child.
# Tests that passed are listed in BUILD/ctest-passed.txt; a later call (the machine still warm, the
# same binaries) runs only the rest, so a few calls of ten minutes finish what one cannot.
#
# Usage: scripts/gpu_ctest.sh BUILD OUT [SECONDS]   (SECONDS: wall limit of this call's tests, 480)
# Prints the counts of this call and of the whole build so far; exit 0 when every test has passed.
set -uo pipefail
build=$1 out=$2 budget=${3:-480}
# ReportStore's shared store holds a replayed nbody run whose ~6x faster kernel must win the gate.
cpu_timed='^(Run|RunGate|RunResume|RunLifecycle|Signals|Ceilings|Noise|ReportStore)[./]'
passed="$build/ctest-passed.txt"
# The list holds for one build: a rebuilt kevo or test binary starts it again.
key=$(stat -c '%n %s %Y' "$build/kevo" "$build"/tests/kevo_tests* 2>/dev/null)
[ "$(cat "$passed.key" 2>/dev/null)" = "$key" ] || { : > "$passed"; echo "$key" > "$passed.key"; }

# Comma-separated numbers of the tests of one group (grep -E or grep -vE on the CPU-timed pattern)
# not yet passed. The numbers come from the unfiltered list: `ctest -N -R` numbers its selection anew.
remaining() {
    (cd "$build" && ctest -N) | sed -n 's/^ *Test *#\([0-9]*\): *\(.*\)$/\1 \2/p' |
        while read -r number name; do
            echo "$name" | grep -q $1 "$cpu_timed" && ! grep -qxF "$name" "$passed" && echo "$number"
        done | paste -sd, -
}

# Runs the listed tests ($3) on cores $1 with $2 jobs, PoCL using $4 threads per test; the log is $5.
run_group() {
    local cores=$1 jobs=$2 numbers=$3 pocl_threads=$4 log=$5
    [ -z "$numbers" ] && { echo "(nothing left in this group)" > "$log"; return; }
    (cd "$build" && POCL_CPU_MAX_CU_COUNT=$pocl_threads timeout "$budget" taskset -c "$cores" \
        ctest --output-on-failure -j"$jobs" -I "0,0,0,$numbers") > "$log" 2>&1
}

# ctest starts the costliest tests first when it knows their costs; a fresh machine has none, so it
# is given the seconds each test took on the H200 (scripts/gpu_ctest_costs.txt, ctest's own
# CTestCostData format, from the 2 December 2026 run; the two it never finished are put at 600 s).
# Without it the long tests (a killed sweep, a killed study, 300 s each) start last and miss the call.
mkdir -p "$build/Testing/Temporary"
[ -s "$build/Testing/Temporary/CTestCostData.txt" ] || cp "$(dirname "$0")/gpu_ctest_costs.txt" "$build/Testing/Temporary/CTestCostData.txt"

cores=$(nproc)
if [ "$cores" -lt 8 ]; then
    echo "gpu_ctest: $cores cores; this split needs at least 8 (run ctest directly)" >&2
    exit 2
fi
timed=$(remaining -E) rest=$(remaining -vE)
echo "left before this call: $(echo "$timed" | tr , '\n' | grep -c .) CPU-timed, $(echo "$rest" | tr , '\n' | grep -c .) others"
run_group 0-3 1 "$timed" 4 "$out/ctest-timed.log" &
# Two PoCL threads per test in the crowded group: twelve tests each spinning up twelve threads on
# twelve cores left a PoCL-heavy study crawling (two tests never finished within a call).
run_group "4-$((cores - 1))" "$cores" "$rest" 2 "$out/ctest.log"
wait

# A result line: "  12/742 Test  #40: NAME ........   Passed    1.2 sec"; a NAME may hold spaces.
result_names() { sed -n 's/^ *[0-9]*\/[0-9]* *Test *#[0-9]*: \(.*[^ .]\) \.*[ *]*'"$1"'.*/\1/p' "$out/ctest.log" "$out/ctest-timed.log"; }
# A test that skips itself (no LiteLLM, no chromium on that host) is done too; the names are printed.
result_names '\(Passed\|Skipped\)' >> "$passed"
for log in "$out/ctest.log" "$out/ctest-timed.log"; do
    grep -E "tests passed|tests failed" "$log"
done
echo "failed in this call:"; result_names '\(Failed\|Timeout\|Exception\|SEGFAULT\|Not Run\)' | sed 's/^/  /'
echo "skipped in this call:"; result_names 'Skipped' | sed 's/^/  /'
sort -u -o "$passed" "$passed"
total=$(cd "$build" && ctest -N | sed -n 's/^Total Tests: *//p')
echo "passed or skipped so far: $(wc -l < "$passed") of $total"
[ "$(wc -l < "$passed")" -ge "$total" ]
