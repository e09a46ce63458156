#!/usr/bin/env bash
# Issue 22's training goals on this machine, measured in one run:
#  - one thread: the whole training step (BM_MlpTrain/5000/1: 300 inputs,
#    2 x 128 ELU, 128 outputs, batch 128, Adam, 5000 steps) as a share of one
#    core's float32 FMA peak (bench/fma_peak_bench, BM_Fma512, measured in
#    the same round on the same core); goal >= 70 %;
#  - two threads (BM_MlpTrain/5000/2 on CPUs 0-1) against one: goal >= 1.7x.
# Each round runs the peak, then one thread, then two; the ratios are taken
# inside a round and the medians over rounds are printed.
# Usage: bench/compare_train_peak.sh [BUILD_DIR] [ROUNDS]
#   BUILD_DIR: a build with CHARKIT_BUILD_BENCH=ON (default build/release).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
rounds="${2:-5}"
py=/usr/bin/python3
ninja -C "$build" mlp_bench fma_peak_bench >/dev/null
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# The median over a program's repetitions of one JSON field.
field() {
  $py -c 'import json,sys,statistics
d=json.load(sys.stdin); k=sys.argv[1]
print(statistics.median(b[k] for b in d["benchmarks"] if b.get("run_type")=="iteration"))' "$1"
}
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "round  peak_GFLOPs  t1_ms  t1_GFLOPs  t1_share  t2_ms  speed_up"
share=() speed=()
for r in $(seq "$rounds"); do
  peak=$(taskset -c 0 "$build/bench/fma_peak_bench" --benchmark_filter='BM_Fma512' \
    --benchmark_repetitions=5 --benchmark_format=json 2>/dev/null | field 'FLOP/s')
  j1=$(taskset -c 0 "$build/bench/mlp_bench" --benchmark_filter='BM_MlpTrain/5000/1/' \
    --benchmark_format=json 2>/dev/null)
  t1=$(field real_time <<<"$j1")
  f1=$(field 'FLOP/s' <<<"$j1")
  t2=$(taskset -c 0-1 "$build/bench/mlp_bench" --benchmark_filter='BM_MlpTrain/5000/2/' \
    --benchmark_format=json 2>/dev/null | field real_time)
  # fma_peak_bench's counter is in GFLOP/s; mlp_bench's in FLOP/s.
  s=$($py -c "print(round($f1/1e9/$peak, 3))")
  u=$($py -c "print(round($t1/$t2, 3))")
  share+=("$s") speed+=("$u")
  printf '%5d  %11.1f  %5.0f  %9.1f  %8s  %5.0f  %8s\n' "$r" \
    "$peak" "$t1" "$($py -c "print($f1/1e9)")" "$s" "$t2" "$u"
done
echo "median share of the FMA peak (one thread): $(printf '%s\n' "${share[@]}" | median) (goal >= 0.70)"
echo "median two threads / one thread:           $(printf '%s\n' "${speed[@]}" | median) (goal >= 1.7)"
