#!/usr/bin/env bash
# Batched inference of the deformer's network (300 inputs, 2 x 128 ELU, 128
# outputs) side by side, one thread pinned to CPU 0, the same batch sizes:
#  - charkit MlpEvaluator::evaluate_batch (bench/mlp_bench BM_MlpInferBatch),
#  - charkit's ONNX runner on the same network as an ONNX file (BM_OnnxInferBatch),
#  - onnxruntime-node (bench/peer/mlp_ort_batch.mjs), one intra-op thread;
# with one core's FMA peak (bench/fma_peak_bench) measured in the same run.
# Needs (not part of the test bootstrap):
#   apt-get install python3-onnx
#   (cd bench/peer && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save onnxruntime-node)
# Usage: bench/compare_mlp_batch.sh [BUILD_DIR] [REPEATS]
#   BUILD_DIR: a release build with CHARKIT_BUILD_BENCH=ON (default build/release:
#   the portable preset; its kernels are picked at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
reps="${2:-5}"
py=/usr/bin/python3
if [ ! -f "$build/build.ninja" ]; then cmake --preset release -B "$build" >/dev/null; fi
ninja -C "$build" mlp_bench fma_peak_bench >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
$py bench/peer/mlp_onnx_batch.py "$out/mlp.onnx" 1024

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c 0 "$build/bench/fma_peak_bench" --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true 2>/dev/null | grep -E "median" || true
CHARKIT_BENCH_ONNX_BATCH="$out/mlp.onnx" taskset -c 0 "$build/bench/mlp_bench" \
  --benchmark_filter='BM_MlpInferOnePose|BM_OnnxInferBatch' \
  --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true 2>/dev/null |
  grep -E "median" || true
if [ ! -f bench/peer/node_modules/onnxruntime-node/package.json ]; then
  echo "onnxruntime-node: not installed (see the header of this script)"
  exit 0
fi
# charkit and onnxruntime-node alternate, REPEATS rounds; each round runs
# every batch size on both sides (charkit: the median of 3 repetitions,
# onnxruntime-node: 3 timed rounds of ~0.5 s) and prints the ratio, so a
# noisy neighbour slows both sides of a round alike. Then the medians.
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -A ck ort ratio
printf '%-6s %6s %14s %14s %8s\n' round batch "charkit us" "ort-node us" ratio
for round in $(seq 1 "$reps"); do
  res=$(taskset -c 0 "$build/bench/mlp_bench" --benchmark_filter='BM_MlpInferBatch' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>/dev/null)
  for b in 1 64 256 1024; do
    c=$(awk -v b="BM_MlpInferBatch/$b""_median" '$1 == b {for (i = 1; i <= NF; ++i) if ($i ~ /^us_per_pose=/) {sub("us_per_pose=", "", $i); v = $i; if (v ~ /ns$/) {sub("ns", "", v); v /= 1000} else sub("us", "", v); print v}}' <<<"$res")
    o=$(cd bench/peer && taskset -c 0 node mlp_ort_batch.mjs "$out/mlp.onnx" "$b" 3 | sed -n 's/.*: \([0-9.]*\) us per pose.*/\1/p')
    r=$(awk -v o="$o" -v c="$c" 'BEGIN {printf "%.2f", o / c}')
    printf '%-6s %6s %14s %14s %8s\n' "$round" "$b" "$c" "$o" "$r"
    ck[$b]+="$c "; ort[$b]+="$o "; ratio[$b]+="$r "
  done
done
for b in 1 64 256 1024; do
  printf '%-6s %6s %14s %14s %8s\n' median "$b" "$(tr ' ' '\n' <<<"${ck[$b]}" | grep . | median)" \
    "$(tr ' ' '\n' <<<"${ort[$b]}" | grep . | median)" "$(tr ' ' '\n' <<<"${ratio[$b]}" | grep . | median)"
done
