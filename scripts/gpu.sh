#!/usr/bin/env bash
# Builds kevo on the lent GPU machine (Ubuntu 24.04, CUDA 13) and runs the GPU tests and
# benchmarks. Missing Debian packages travel unpacked from .deps/debs (scripts/fetch-gpu-deps.sh).
# Usage: scripts/gpu.sh [build] [test] [calibrate] [ceilings] [seeds] [tune] [overhead] [bench] [margins] [margins-opencl]
#        [slightly-wrong] [check-opencl] [bench-opencl] [pinned-ab] [variants] [sweep-noise] [report] [strategies]
#        [tensor-ceilings] [ml-check] [bench-ml] [bench-trace] [trace] [ml-wrong] [ml-recipes] [moe] [nsight] [triton]
#        (default: build test calibrate seeds tune overhead bench)
# (`pinned-ab` is run only when named: the A/B of the CUDA backend's pinned staging.)
# `scripts/gpu.sh build test` runs the whole ctest within KEVO_CTEST_SECONDS (default 480), and
# `scripts/gpu.sh test` issued at once on the still-warm machine runs only what has not passed
# (scripts/gpu_ctest.sh); two such calls finish it.
# `scripts/gpu.sh build bench` is the rerunnable H200 benchmark: kevo bench (every best-known kernel
# checked at every size of every profile, then seeds and best kernels timed at the large profile
# beside cuFFT / cuBLAS / a vectorised kernel), then kevo's evaluation overhead against the Python
# route; the document lands in $OUT/bench-h200.md (committed as docs/bench-h200.md).
# `scripts/gpu.sh build bench-opencl` does the same for the OpenCL best-known kernels (best.cl) on the
# GPU's OpenCL device, each call ending itself within 10 minutes (rerun it until it exits 0); its
# document lands in $OUT/bench-h200-opencl.md (committed as docs/bench-h200-opencl.md).
# `scripts/gpu.sh build check-opencl` checks every best.cl on every OpenCL device (both paths where
# a kernel has two) at the small profile: $OUT/check-opencl.txt.
# `scripts/gpu.sh build sweep-noise` runs one tune study (3 tasks x 4 seeds) at concurrency 1 and 4 and
# compares verdicts and scores: $OUT/sweep-noise.md.
# `scripts/gpu.sh build variants` times the knob variants listed in bench/variants.txt (one
# `task [-D NAME=VALUE ...]` per line) on their task's large held-out size: how the defaults of the
# best-known kernels were chosen.
# `scripts/gpu.sh build triton` evaluates every Triton seed (tasks/<task>/seed.py) with the image's own
# Triton: compile-only, then in full at small, paper and large: $OUT/triton.txt. TASKS and
# TRITON_MODES narrow it.
# Steps run in the order they are written below, whatever the order of the arguments.
# Summaries go to $OUT (or ./gpu-out) as text; every JSON document into $OUT/results.tar.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
RES="$PWD/build-gpu/results"
mkdir -p "$OUT" "$RES"
STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(build test calibrate seeds tune overhead bench)
want() { local s; for s in "${STEPS[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
# A step's summary file that stayed empty (the step was not asked for) is not sent back: a call
# returns at most 8 files.
drop_if_empty() { [ -s "$1" ] || rm -f "$1"; }

DEPS="$PWD/.deps/root"
mkdir -p "$DEPS"
for deb in .deps/debs/*.deb; do
    # Debian's cpp-httplib links against Debian's brotli/OpenSSL builds, which the Ubuntu image
    # lacks, so the fake-LLM-endpoint tests (no GPU in them; CI runs them) are left out here
    # unless KEVO_GPU_HTTPLIB=1 asks for them.
    case "$deb" in *httplib*) [ "${KEVO_GPU_HTTPLIB:-0}" = 1 ] || continue ;; esac
    [ -e "$deb" ] && dpkg -x "$deb" "$DEPS"
done
# NVIDIA's OpenCL library is installed but not registered with the ICD loader.
mkdir -p /tmp/kevo-icd && echo libnvidia-opencl.so.1 > /tmp/kevo-icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/kevo-icd
export KEVO_CACHE_DIR="$PWD/build-gpu/cache"
export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
KEVO=./build-gpu/kevo
# Every task of the suite (or of the pack named as the argument), or only those named in TASKS
# (space-separated).
tasks() {
    if [ -n "${TASKS:-}" ]; then echo "$TASKS"; return; fi
    $KEVO tasks ${1:+--pack "$1"} --json | python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["tasks"]))'
}
# The OpenCL device that is the GPU (the image also registers PoCL, which may come first).
ocl_gpu() { $KEVO devices --json | python3 -c 'import json,sys
for b in json.load(sys.stdin)["backends"]:
    if b["name"] == "opencl":
        print(next((d["index"] for d in b["devices"] if not d["is_cpu"]), 0))'; }

if want build; then
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$DEPS/usr" -DCMAKE_INCLUDE_PATH="$DEPS/usr/include" \
        -DSQLite3_INCLUDE_DIR="$DEPS/usr/include" -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \
        2>&1 | tail -2
    # KEVO_BUILD_TARGET=kevo builds only the binary (a call that runs no test needs no more).
    # -k 0: every file that fails is named, not only the first.
    cmake --build build-gpu -j"$(nproc)" --target "${KEVO_BUILD_TARGET:-all}" -- -k 0 > "$RES/build.log" 2>&1 || true
    grep -E "error|FAILED|undefined reference" "$RES/build.log" | head -30
    nvcc -O3 -arch=sm_90 -o build-gpu/reference_ceilings bench/reference_ceilings.cu || echo "reference_ceilings: build failed"
    $KEVO devices | tee "$OUT/devices.txt"
fi
if want test; then
    # The whole ctest, resumable: each call runs what has not passed yet (scripts/gpu_ctest.sh says how).
    scripts/gpu_ctest.sh build-gpu "$OUT" "${KEVO_CTEST_SECONDS:-480}"
fi
if want calibrate; then
    { ./build-gpu/reference_ceilings; $KEVO calibrate --backend cuda | tail -6;
      $KEVO calibrate --backend opencl --device "$(ocl_gpu)" | tail -6; } 2>&1 | tee "$OUT/calibrate.txt"
    $KEVO calibrate --backend cuda --json > "$RES/calibrate_cuda.json" 2>/dev/null
fi
if want seeds; then
    # One evaluation per (backend, task, profile), every size including the held-out one; the JSON
    # holds both ceilings, so the static and workload fractions come from the same timings.
    dev=$(ocl_gpu)
    for backend in cuda opencl; do
        suffix=cu; [ $backend = opencl ] && suffix=cl
        profiles="paper large"; [ $backend = opencl ] && profiles="paper"
        d=0; [ $backend = opencl ] && d=$dev
        for task in $(tasks); do
            $KEVO show "$task" --backend $backend > "/tmp/seed_$task.$suffix"
            for profile in $profiles; do
                f="$RES/seed_${backend}_${task}_${profile}.json"
                timeout 300 $KEVO eval "$task" "/tmp/seed_$task.$suffix" --backend $backend --device $d --profile $profile \
                    --sizes all --seed 1 --timeout 240 --json > "$f" 2>>"$RES/seeds.err"
                python3 scripts/seed_table.py "$f"
            done
        done
    done 2>&1 | tee "$OUT/seeds.txt"
fi
if want tune; then
    for task in ${TUNE_TASKS:-heat2d lbm wave3d}; do
        $KEVO run "$task" --backend cuda --profile paper --proposer tune --iterations "${TUNE_ITERATIONS:-12}" --seed 1 \
            --db "$RES/runs.db" --out "$RES/runs" --json > "$RES/tune_$task.json" 2> "$RES/tune_$task.log"
        tail -3 "$RES/tune_$task.log"
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d[k] for k in ("task","iterations","seed_score","best_score","speedup","heldout_fraction","heldout_seed_fraction","heldout_speedup","best_path")})' "$RES/tune_$task.json"
    done 2>&1 | tee "$OUT/tune.txt"
fi
# The tensor-core ceilings and the ML launch contract on the device: `kevo calibrate --backend cuda`
# (the cuBLASLt bf16, fp8 and int8 GEMMs at 8192^3 beside the datasheet's 989 / 1979 / 1979 T), then
# bench/launch/: saxpy through 96 KiB of dynamic shared memory (smem=, must be ok), one asking for
# more than a block may have (must be rejected, naming the limit) and a wgmma.fence kernel under
# `// kevo: target sm_90a` (must be ok): $OUT/tensor-ceilings.txt.
if want tensor-ceilings; then
    {
        $KEVO calibrate --backend cuda | grep -E "^(streaming|FP32|datasheet|tensor)"
        $KEVO calibrate --backend cuda --json > "$RES/calibrate_cuda_tensor.json" 2>/dev/null
        python3 -c 'import json,sys
c = json.load(open(sys.argv[1])); sheet = (c.get("datasheet") or {}).get("tensor_gflops", {})
for t in c["tensor"]:
    ref = sheet.get(t["class"])
    print("%-5s %-9s %8.1f TFLOP/s  datasheet %s  runs %s  (%s)" % (t["class"], t["source"], t["gflops"] / 1e3,
          "%.0f" % (ref / 1e3) if ref else "-", " ".join("%.0f" % (r / 1e3) for r in t["runs"]), t["how"]))' \
            "$RES/calibrate_cuda_tensor.json"
        $KEVO devices | grep -E "tensor|ceilings"
        for f in bench/launch/*.cu; do
            timeout 300 $KEVO eval saxpy "$f" --backend cuda --profile paper --seed 1 --json > "$RES/launch_$(basename "$f" .cu).json" 2>&1
            python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); print(sys.argv[2], d["verdict"], d.get("score"), d["diagnostics"][:200].replace("\n", " "))
for k in d.get("resources", []): print("   ", k["kernel"], "static shared", k["shared_bytes"], "registers", k["registers"])' \
                "$RES/launch_$(basename "$f" .cu).json" "$(basename "$f")"
        done
    } 2>&1 | tee "$OUT/tensor-ceilings.txt"
fi
# The study report of every run in the store (`tune`'s runs): $OUT/report.html, self-contained (its
# figures as PNG: scripts/report_screenshots.sh $OUT/report.html DIR, where chromium is installed),
# and the same runs as CSV tables in $OUT/csv.
if want report; then
    $KEVO report --all --db "$RES/runs.db" --html "$OUT/report.html" &&
        $KEVO export --all --db "$RES/runs.db" --csv "$OUT/csv" 2>&1 | tee "$OUT/report.txt"
fi
# kevo's evaluation overhead on every task against the Python route (bench/python_overhead.py, one
# task of every regime); the table lands in $OUT/overhead.md. KEVO_PINNED=0 in the environment makes kevo
# copy through pageable memory (the A/B for its pinned staging).
# The tolerance margins of every seed and best-known kernel on this GPU (tolerance / error, smallest
# over sizes, trials and seeds): `margins` for CUDA (MARGIN_PROFILES, MARGIN_SEEDS), `margins-opencl`
# for NVIDIA's OpenCL; `slightly-wrong` checks that every slightly-wrong CUDA kernel is rejected here.
if want margins; then
    python3 scripts/margins.py --kevo "$KEVO" --backend cuda ${TASKS:+--tasks "${TASKS// /,}"} --profiles "${MARGIN_PROFILES:-small,large}" \
        --seeds "${MARGIN_SEEDS:-1}" --timeout 300 --json "$RES/margins_cuda_${MARGIN_PROFILES:-all}.json" 2>&1 |
        tee "$OUT/margins-cuda-${MARGIN_PROFILES:-all}.md"
fi
if want margins-opencl; then
    python3 scripts/margins.py --kevo "$KEVO" --backend opencl --device "$(ocl_gpu)" ${TASKS:+--tasks "${TASKS// /,}"} --profiles "${MARGIN_PROFILES:-small}" \
        --seeds "${MARGIN_SEEDS:-1}" --timeout 120 --json "$RES/margins_opencl.json" 2>&1 | tee "$OUT/margins-opencl.md"
fi
if want slightly-wrong; then
    for task in $(tasks); do
        for seed in 1 2; do
            printf '%s seed %s: ' "$task" "$seed"
            timeout 120 $KEVO eval "$task" "tests/candidates/${task}_slightly_wrong.cu" --backend cuda --profile small \
                --sizes all --check-only --seed "$seed" --json 2>/dev/null < /dev/null |
                python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["verdict"], d["diagnostics"][:120])'
        done
    done 2>&1 | tee "$OUT/slightly-wrong-cuda.txt"
fi
# The ceilings a score is divided by, from an empty cache: the first eval measures them (the
# datasheet only beside them), kevo calibrate then gives the same figures within noise, and three
# calibrations from empty caches agree (scripts/calibration_stability.sh, limit 15%).
if want ceilings; then
    cache=$(mktemp -d)
    heldout_eval() { KEVO_CACHE_DIR="$cache" $KEVO eval heat2d tasks/heat2d/best.cu --backend cuda --profile large --sizes heldout; }
    {
        echo "== first use, empty cache"; heldout_eval | grep -E "^[0-9]|ceilings|score"
        echo "== kevo calibrate"; KEVO_CACHE_DIR="$cache" $KEVO calibrate --backend cuda | tail -5
        echo "== the same eval after kevo calibrate"; heldout_eval | grep -E "^[0-9]|ceilings|score"
        echo "== three calibrations from empty caches"; KEVO=$KEVO scripts/calibration_stability.sh --backend cuda
    } 2>&1 | tee "$OUT/ceilings.txt"
fi
if want overhead; then
    {
        ./build-gpu/kevo_bench_eval --backend cuda --profile paper --runs "${OVERHEAD_RUNS:-5}" --json "$RES/overhead_kevo.json"
        python3 bench/python_overhead.py --runs "${OVERHEAD_RUNS:-5}" --json "$RES/overhead_python.json"
        python3 scripts/overhead_table.py "$RES/overhead_kevo.json" "$RES/overhead_python.json" > "$OUT/overhead.md"
        cat "$OUT/overhead.md"
    } 2>&1 | tee "$OUT/overhead.txt"
fi
# A/B of the CUDA backend's pinned staging against pageable copies (KEVO_PINNED=0), interleaved:
# the raw rates of a 96 MiB round trip, then kevo's overhead on the two tasks that move the most.
if want pinned-ab; then
    for round in 1 2 3; do
        for pinned in 0 1; do
            echo "== round $round, KEVO_PINNED=$pinned"
            KEVO_PINNED=$pinned ./build-gpu/tests/kevo_tests --gtest_filter=CudaBackendDevice.LargeTransfersRoundTrip | grep "GB/s"
            KEVO_PINNED=$pinned ./build-gpu/kevo_bench_eval --backend cuda --profile paper --runs 4 saxpy fft3d | grep -v "^evaluator"
        done
    done 2>&1 | tee "$OUT/pinned-ab.txt"
fi
if want variants; then
    $KEVO calibrate --backend cuda > /dev/null 2>&1
    grep -v '^#' "${VARIANTS_FILE:-bench/variants.txt}" | while read -r task defines; do
        [ -z "$task" ] && continue
        # shellcheck disable=SC2086
        timeout 200 $KEVO eval "$task" "tasks/$task/best.cu" --backend cuda --profile large --sizes "${VARIANT_SIZES:-heldout}" \
            --seed 1 --warmup 2 --repeat 5 --json $defines 2>/dev/null < /dev/null | python3 scripts/variant_line.py "$task" "${defines:--}"
    done 2>&1 | tee "$OUT/variants.txt"
fi
# kevo bench at the large profile, its progress saved in $RES/<name>_state.json after every step:
# when the deadline cuts it short, the same command resumes it (on a warm machine, or with
# build-gpu/results carried); it then returns 124. Usage: resumable_bench STEP NAME DOC KEVO-BENCH-ARGS...
resumable_bench() {
    local step=$1 name=$2 doc=$3 rc
    shift 3
    timeout "${KEVO_BENCH_TIMEOUT:-3000}" $KEVO bench "$@" --profile "${BENCH_PROFILE:-large}" \
        --check-profiles "${BENCH_CHECK_PROFILES:-small,paper,large}" ${BENCH_TASKS:+--tasks "$BENCH_TASKS"} \
        --state "$RES/${name}_state.json" --markdown "$doc" --json > "$RES/$name.json" 2>> "$RES/$name.log"
    rc=$?
    cp "$RES/${name}_state.json" "$OUT/" 2>/dev/null
    echo "kevo bench ($step): exit $rc"
    grep -v '^    ' "$RES/$name.log" | tail -80
    if [ $rc = 124 ]; then
        echo "kevo bench ($step): deadline reached; run the same command again to resume"
        return 124
    fi
    sed -i "s|^- Produced by: \`kevo bench\(.*\) --markdown [^\`]*\`|- Produced by \`scripts/gpu.sh build $step\`, which runs \`kevo bench\1\`|" "$doc"
}
if want bench; then
    doc="$OUT/bench-h200.md"
    resumable_bench bench bench "$doc" --backend cuda || exit $?
    python3 scripts/goals_table.py "$RES/bench.json" | tee -a "$doc"
    if [ "${BENCH_OVERHEAD:-1}" = 1 ]; then
        ./build-gpu/kevo_bench_eval --backend cuda --profile paper --runs 7 --json "$RES/overhead_kevo.json" heat2d saxpy
        python3 bench/python_overhead.py --runs 7 --tasks heat2d,saxpy --json "$RES/overhead_python.json"
        python3 scripts/overhead_table.py "$RES/overhead_kevo.json" "$RES/overhead_python.json" | tee -a "$doc"
    fi
fi 2>&1 | tee "$OUT/bench.txt"; drop_if_empty "$OUT/bench.txt"
# The ML pack's kernels on the GPU, quickly: every seed.cu and best.cu checked at the small profile
# (against the CPU reference), then best.cu timed at the large profile (against the device seed):
# verdicts, fractions of the speed of light, limiters and check margins in $OUT/ml-check.txt.
if want ml-check; then
    for task in $(tasks ml); do
        for run in "seed small --check-only" "best small --check-only" "best large"; do
            set -- $run
            # --timeout 120: topk_sampling's large check (2 x 1.2 GB per trial, checked on the host)
            # passed 20 s of candidate time at its second size on the H200.
            timeout 300 $KEVO eval "$task" "tasks/$task/$1.cu" --backend cuda --profile "$2" --sizes all --seed 1 \
                --timeout 120 --json ${3:-} > "$RES/mlcheck_${task}_$1_$2.json" 2>> "$RES/mlcheck.err" < /dev/null
            python3 scripts/ml_check_table.py "$RES/mlcheck_${task}_$1_$2.json"
        done
    done 2>&1 | tee "$OUT/ml-check.txt"
fi
# The ML pack's bench (docs/bench-h200-ml.md): every best.cu checked at every size of every profile,
# seeds, best kernels and the cuBLASLt peers timed at the large profile, S and S_agg per weight vector.
# Resumable like `bench` (KEVO_BENCH_TIMEOUT bounds one call; the state file comes back in $OUT).
if want bench-ml; then
    resumable_bench bench-ml bench-ml "$OUT/bench-h200-ml.md" --backend cuda --pack ml
fi 2>&1 | tee "$OUT/bench-ml.txt"; drop_if_empty "$OUT/bench-ml.txt"
# The ML pack at the trace profile (production shapes weighted by call count, launch-bound ones as
# CUDA-graph replays): every best kernel checked at its trace shapes, seeds and best kernels timed
# there; S and S_agg on trace in $OUT/bench-h200-ml-trace.md.
if want bench-trace; then
    BENCH_PROFILE=trace BENCH_CHECK_PROFILES="${BENCH_CHECK_PROFILES:-trace}" \
        resumable_bench bench-trace bench-trace "$OUT/bench-h200-ml-trace.md" --backend cuda --pack ml
fi 2>&1 | tee "$OUT/bench-trace.txt"; drop_if_empty "$OUT/bench-trace.txt"
# The trace profile on CUDA, quickly: seed.cu and best.cu of the lighter ML tasks (TRACE_TASKS) at every
# trace shape, the launch-bound ones as CUDA-graph replays, and the kernel that writes only in its
# first launch (must be incorrect): $OUT/trace.txt.
if want trace; then
    for task in ${TRACE_TASKS:-kv_cache_write rope qk_norm_rope_kv causal_conv1d silu_and_mul add_rmsnorm per_token_group_quant_fp8 topk_sampling attention_decode_paged}; do
        for kernel in seed best; do
            echo "=== $task $kernel.cu trace"
            timeout 150 $KEVO eval "$task" "tasks/$task/$kernel.cu" --backend cuda --profile trace --sizes all --seed 1 < /dev/null
            echo "exit $?"
        done
    done
    echo "=== tests/candidates/kv_cache_write_first_launch_only.cu trace (must be incorrect)"
    timeout 150 $KEVO eval kv_cache_write tests/candidates/kv_cache_write_first_launch_only.cu --backend cuda --profile trace \
        --sizes all --seed 1 < /dev/null
fi 2>&1 | tee "$OUT/trace.txt"; drop_if_empty "$OUT/trace.txt"
# Every deliberately wrong CUDA kernel of the ML pack (tests/candidates/<task>_*.cu) checked on the
# GPU at the small profile (ML_WRONG_PROFILE) on two input seeds (ML_WRONG_SEEDS): each must be
# rejected ($OUT/ml-wrong.txt).
if want ml-wrong; then
    for task in $(tasks ml); do
        for file in tests/candidates/"$task"_*.cu; do
            [ -e "$file" ] || continue
            case "$file" in *_recipe_*) continue ;; esac  # production recipes must pass: ml-recipes
            for seed in ${ML_WRONG_SEEDS:-1 2}; do
                printf '%s %s seed %s: ' "$task" "$(basename "$file")" "$seed"
                timeout 300 $KEVO eval "$task" "$file" --backend cuda --profile "${ML_WRONG_PROFILE:-small}" --sizes all \
                    --check-only --seed "$seed" --timeout 240 --json 2>/dev/null < /dev/null | python3 -c 'import json,sys
try: d = json.load(sys.stdin)
except ValueError: print("no result (kevo failed)"); sys.exit()
if "error" in d: print("no verdict:", d["error"]["message"][:150]); sys.exit()
print(d["verdict"], (d["diagnostics"] or "")[:150].replace("\n", " "))'
            done
        done
    done 2>&1 | tee "$OUT/ml-wrong.txt"
fi
# fused_moe's best kernel evaluated, checked and timed, at every size of the paper profile (against
# the CPU reference) and of the large one (against the seed on the device): $OUT/moe.txt.
if want moe; then
    for profile in paper large; do
        timeout 300 $KEVO eval fused_moe tasks/fused_moe/best.cu --backend cuda --profile "$profile" --sizes all --seed 1 \
            --timeout 240 --json > "$RES/mlcheck_fused_moe_best_$profile.json" 2>> "$RES/moe.err" < /dev/null
        echo "fused_moe best.cu $profile: exit $?"
        python3 scripts/ml_check_table.py "$RES/mlcheck_fused_moe_best_$profile.json"
    done 2>&1 | tee "$OUT/moe.txt"
fi
# The ML pack's production-recipe CUDA kernels (tests/candidates/<task>_recipe_*.cu: vLLM's rounding
# orders, one bf16 P; docs/ml-checks.md) checked at every size of ML_RECIPE_PROFILES (default paper
# and large), input seed 1: each must be ok ($OUT/ml-recipes.txt). Check-only evaluations time
# nothing, so ML_RECIPE_JOBS (default 4) of them share the GPU at once; each prints its line whole.
recipe_check() {
    local task=$1 file=$2 profile=$3 json line
    # --timeout 240: fused_moe's naive recipe kernel at its 4096-token prefill took more than the
    # default 60 s of candidate time (H100, 2026-12-05). The JSON stays in $RES.
    json="$RES/recipe_$(basename "$file" .cu)_$profile.json"
    timeout 300 $KEVO eval "$task" "$file" --backend cuda --profile "$profile" --sizes all --check-only --seed 1 \
        --timeout 240 --json 2>/dev/null < /dev/null > "$json"
    line=$(python3 -c 'import json,sys
try: d = json.load(sys.stdin)
except ValueError: print("no result (kevo failed)"); sys.exit()
if "error" in d: print("no verdict:", d["error"]["message"][:150]); sys.exit()
m = [t["tolerance"] / t["error"] for s in d["sizes"] for t in s["trials"] if t["error"]]
print(d["verdict"], "smallest margin", min(m) if m else "inf", (d["diagnostics"] or "")[:600].replace("\n", " "))' < "$json")
    echo "$task $(basename "$file") $profile: $line"
}
if want ml-recipes; then
    export KEVO RES
    export -f recipe_check
    for task in $(tasks ml); do
        for file in tests/candidates/"$task"_recipe_*.cu; do
            [ -e "$file" ] || continue
            for profile in ${ML_RECIPE_PROFILES:-paper large}; do echo "$task $file $profile"; done
        done
    done | xargs -P "${ML_RECIPE_JOBS:-4}" -n 3 bash -c 'recipe_check "$@"' _ 2>&1 | tee "$OUT/ml-recipes.txt"
fi
# Nsight Compute on the best-known kernels of the ML goals that are missed (NSIGHT_TASKS): the
# launches of a checked and timed eval at the large profile (NSIGHT_SIZES: in, heldout or all,
# default all), throughput, memory, occupancy and warp-stall sections, raw in
# $OUT/nsight-<task>-<sizes>[-skip<N>].txt. Per size an eval launches seed, best, seed, best (the two
# correctness trials) and then the timed best: NSIGHT_SKIP launches are run unprofiled first, so that
# a later size is reached without replaying the earlier ones (a slow seed under replay takes
# minutes). NSIGHT_KERNELS (a regex, default the task's name) names the kernels of a multi-kernel
# task. The seed's kernel has the same name; its launches are told apart by their block and grid.
if want nsight; then
    ncu --version | tail -1
    skip="${NSIGHT_SKIP:-0}"
    for task in ${NSIGHT_TASKS:-attention_decode_paged rope kv_cache_write gemm_bf16}; do
        raw="$OUT/nsight-$task-${NSIGHT_SIZES:-all}$([ "$skip" = 0 ] || echo "-skip$skip").txt"
        echo "== $task"
        timeout "${NSIGHT_SECONDS:-150}" ncu --target-processes all --clock-control none \
            -k "regex:${NSIGHT_KERNELS:-^${task}\$}" -s "$skip" -c "${NSIGHT_LAUNCHES:-12}" \
            --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
            --section Occupancy --section LaunchStats --section WarpStateStats \
            $KEVO eval "$task" "tasks/$task/best.cu" --backend cuda --profile large --sizes "${NSIGHT_SIZES:-all}" \
            --seed 1 --warmup 0 --repeat 1 --timeout 200 < /dev/null 2>&1 | grep -vE "^==PROF==" | cut -c1-160 > "$raw"
        grep -E "^  [a-z_]+ \(|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per" "$raw" | head -80
    done
fi
if want check-opencl; then
    # Every best.cl on every OpenCL device of the machine (NVIDIA's and PoCL's), at every small
    # size, correctness only; a kernel with a CPU and a GPU path (knob PATH) is checked on both.
    # The ICD loader sees NVIDIA's library (registered above) and the image's own (PoCL).
    mkdir -p /tmp/kevo-icd-all && cp /tmp/kevo-icd/*.icd /etc/OpenCL/vendors/*.icd /tmp/kevo-icd-all/ 2>/dev/null
    (export OCL_ICD_VENDORS=/tmp/kevo-icd-all
    for dev in $($KEVO devices --json | python3 -c 'import json,sys
for b in json.load(sys.stdin)["backends"]:
    if b["name"] == "opencl":
        print(" ".join(str(d["index"]) for d in b["devices"]))'); do
        for task in $(tasks); do
            paths="default"; grep -q "kevo: tune PATH" "tasks/$task/best.cl" && paths="cpu gpu"
            for path in $paths; do
                def=(); [ "$path" != default ] && def=(-D "PATH=$path")
                printf 'device %s %s %s: ' "$dev" "$task" "$path"
                timeout 300 $KEVO eval "$task" "tasks/$task/best.cl" --backend opencl --device "$dev" --profile small \
                    --sizes all --check-only --timeout 240 "${def[@]}" --json 2>/dev/null < /dev/null |
                    python3 -c 'import json,sys
try: d = json.load(sys.stdin)
except ValueError: print("no result (kevo failed)"); sys.exit()
print(d["verdict"], d["device"], (d["diagnostics"] or "")[:300].replace("\n", " "))'
            done
        done
    done) 2>&1 | tee "$OUT/check-opencl.txt"
fi
if want bench-opencl; then
    # The OpenCL best-known kernels (tasks/*/best.cl) on the same GPU through NVIDIA's OpenCL; no
    # peers there (no vendor library on the OpenCL backend). A lent machine's call ends at 10
    # minutes, so the bench stops itself GPU_CALL_BUDGET seconds (default 570) after this script
    # started, its progress kept in build-gpu/results/bench_opencl_state.json (copied to $OUT):
    # run the same command again until it exits 0 (on a fresh machine, carry build-gpu/results).
    # The large sizes are checked by the timed run itself, so the check phase covers small and paper.
    budget=$(( ${GPU_CALL_BUDGET:-570} - SECONDS ))
    [ "$budget" -lt 60 ] && budget=60
    KEVO_BENCH_TIMEOUT=${KEVO_BENCH_TIMEOUT:-$budget} BENCH_CHECK_PROFILES=${BENCH_CHECK_PROFILES:-small,paper} \
        resumable_bench bench-opencl bench_opencl "$OUT/bench-h200-opencl.md" --backend opencl --device "$(ocl_gpu)"
fi 2>&1 | tee "$OUT/bench-opencl.txt"; drop_if_empty "$OUT/bench-opencl.txt"
if want strategies; then
    # The strategy comparison (docs/study-strategies): stops itself GPU_CALL_BUDGET seconds (default
    # 570) after this script started; run again to finish it (the study and its runs resume).
    scripts/strategy_study.sh "$KEVO" build-gpu/strategies $(( ${GPU_CALL_BUDGET:-570} - SECONDS )) 2>&1 | tee "$OUT/strategies.txt"
    cp build-gpu/strategies/comparison.md build-gpu/strategies/strategies.html "$OUT/" 2>/dev/null
    gzip -c build-gpu/strategies/strategies.db > "$OUT/strategies.db.gz"
    # (retime.md is in strategies.txt too; a call returns at most 8 files)
    tar -czf "$OUT/strategies-logs.tar.gz" -C build-gpu/strategies csv sweep.log retime.md retime.json $(cd build-gpu/strategies && ls exhaustive-*.log) 2>/dev/null
fi
if want sweep-noise; then
    # The same tune study at concurrency 1 and 4 on the GPU: verdicts must be equal, score
    # differences are set against the runs' own timing spread (scripts/sweep_noise.py).
    python3 scripts/sweep_noise.py --kevo "$KEVO" --backend cuda --tasks saxpy,heat2d,nbody --seeds 1,2,3,4 \
        --iterations 6 --concurrency 4 --out build-gpu/sweep-noise 2>&1 | tee "$OUT/sweep-noise.md"
fi
if want triton; then
    export KEVO_TRITON_PYTHON="${KEVO_TRITON_PYTHON:-$(command -v python3)}"
    for seed in tasks/*/seed.py; do
        task=$(basename "$(dirname "$seed")")
        [ -n "${TASKS:-}" ] && [[ " $TASKS " != *" $task "* ]] && continue
        for mode in ${TRITON_MODES:-compile-only small paper large}; do
            if [ "$mode" = compile-only ]; then args=(--compile-only); else args=(--profile "$mode" --sizes all); fi
            json="$RES/triton_${task}_$mode.json"
            timeout 300 $KEVO eval "$task" "$seed" --backend cuda "${args[@]}" --seed 1 --json < /dev/null > "$json" 2> "$json.err"
            echo "$task $mode: exit $? $(python3 -c 'import json,sys
try: d = json.load(open(sys.argv[1]))
except ValueError: print("no result:", open(sys.argv[1] + ".err").read()[-300:].replace("\n", " ")); sys.exit()
fr = [s.get("fraction") for s in d.get("sizes", []) if s.get("fraction")]
print(d.get("verdict"), (d.get("diagnostics") or "")[:200].replace("\n", " "), "fractions", fr)' "$json")"
        done
    done 2>&1 | tee "$OUT/triton.txt"
fi
tar -czf "$OUT/results.tar.gz" -C build-gpu results 2>/dev/null

