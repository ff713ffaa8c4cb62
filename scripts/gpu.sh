#!/usr/bin/env bash
# Builds kevo on the lent GPU machine (Ubuntu 24.04, CUDA 13) and runs the GPU tests and
# benchmarks. Missing Debian packages travel unpacked from .deps/debs (see scripts/fetch-gpu-deps.sh).
# Usage: scripts/gpu.sh [build] [test] [calibrate] [seeds] [overhead] ...   (default: all)
# Results go to $OUT (or ./gpu-out) as logs and JSON.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(build test calibrate seeds overhead)
want() { local s; for s in "${STEPS[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

DEPS="$PWD/.deps/root"
mkdir -p "$DEPS"
for deb in .deps/debs/*.deb; do [ -e "$deb" ] && dpkg -x "$deb" "$DEPS"; done
# NVIDIA's OpenCL library is installed but not registered with the ICD loader.
mkdir -p /tmp/kevo-icd && echo libnvidia-opencl.so.1 > /tmp/kevo-icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/kevo-icd
export KEVO_CACHE_DIR="$PWD/build-gpu/cache"
export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
KEVO=./build-gpu/kevo

if want build; then
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$DEPS/usr" -DCMAKE_INCLUDE_PATH="$DEPS/usr/include" \
        -DSQLite3_INCLUDE_DIR="$DEPS/usr/include" -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
        2>&1 | tail -3
    cmake --build build-gpu -j"$(nproc)" 2>&1 | grep -E "error|warning: unused|FAILED|Linking CXX executable" | head -40
    nvcc -O3 -arch=sm_90 -o build-gpu/reference_ceilings bench/reference_ceilings.cu || echo "reference_ceilings: build failed"
    $KEVO devices | tee "$OUT/devices.txt"
fi
if want test; then
    (cd build-gpu && ctest --output-on-failure -j4 2>&1) > "$OUT/ctest.log"
    grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Not Run" "$OUT/ctest.log" | head -40
    echo "GPU test cases that ran (not skipped):"; grep -cE "^\s*[0-9]+/[0-9]+ Test.*Passed" "$OUT/ctest.log"
    grep -B2 -A20 "Failure\|FAILED" "$OUT/ctest.log" | head -80
fi
if want calibrate; then
    ./build-gpu/reference_ceilings | tee "$OUT/reference_ceilings.txt"
    $KEVO calibrate --backend cuda | tee "$OUT/calibrate_cuda.txt" | tail -8
    $KEVO calibrate --backend cuda --json > "$OUT/calibrate_cuda.json" 2>/dev/null
    $KEVO calibrate --backend opencl --quick | tail -4
fi
if want seeds; then
    # One evaluation per (backend, task, profile), every size including the held-out one; the JSON
    # holds both ceilings, so the static and workload fractions come from the same timings.
    for backend in cuda opencl; do
        suffix=cu; [ $backend = opencl ] && suffix=cl
        profiles="paper large"; [ $backend = opencl ] && profiles="paper"
        for task in $($KEVO tasks --json | python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["tasks"]))'); do
            $KEVO show "$task" --backend $backend > "/tmp/seed_$task.$suffix"
            for profile in $profiles; do
                $KEVO eval "$task" "/tmp/seed_$task.$suffix" --backend $backend --profile $profile --sizes all \
                    --seed 1 --json > "$OUT/seed_${backend}_${task}_${profile}.json" 2>>"$OUT/seeds.err"
                python3 scripts/seed_table.py "$OUT/seed_${backend}_${task}_${profile}.json"
            done
        done
    done 2>&1 | tee "$OUT/seeds.txt"
fi
if want overhead; then
    ./build-gpu/kevo_bench_eval --backend cuda --profile paper --runs 7 | tee "$OUT/overhead_cuda_paper.txt"
fi
