#!/usr/bin/env bash
# Sparse morph evaluation (BEM §10, deform/sparse_morph) against memcpy of the
# same bytes, in the same process: bench/morph_bench's 1M-vertex, 64-channel
# job (two frames per channel, 10 % of the vertices each). RUNS processes
# (default 7); each runs every case 5 times, interleaved, and gives its
# medians. Reported per process and as the median over processes:
#   one thread  / memcpy   speed ratio (goal ≥ 0.85)
#   two threads / one thread speed-up  (goal ≥ 1.7)
# Ratios are taken inside one process, so a noisy neighbour that slows a
# whole process slows both sides. Builds the release preset (portable: the
# AVX-512 record kernel is chosen at run time).
#   bench/compare_morph.sh [RUNS]
# MORPH_BENCH=path runs that morph_bench binary instead (e.g. an older build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-7}
cd "$root"

bench=${MORPH_BENCH:-}
if [[ -z $bench ]]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target morph_bench >/dev/null
  bench=$root/build/release/bench/morph_bench
fi
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores," \
  "avx512f: $(grep -q avx512f /proc/cpuinfo && echo yes || echo no)"

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ratios=() speedups=() ones=() twos=() copies=()
printf '%-4s %12s %12s %12s %14s %12s\n' run "1 thread ms" "2 threads ms" "memcpy ms" "1T/memcpy" "2T speed-up"
for r in $(seq 1 "$runs"); do
  out=$("$bench" --benchmark_filter='MorphFast|Memcpy' --benchmark_repetitions=5 \
    --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true 2>/dev/null)
  t1=$(awk '/^BM_MorphFast\/1\/real_time_median/ {print $2}' <<<"$out")
  t2=$(awk '/^BM_MorphFast\/2\/real_time_median/ {print $2}' <<<"$out")
  tm=$(awk '/^BM_Memcpy\/real_time_median/ {print $2}' <<<"$out")
  ratio=$(awk -v m="$tm" -v a="$t1" 'BEGIN {printf "%.3f", m / a}')
  speedup=$(awk -v a="$t1" -v b="$t2" 'BEGIN {printf "%.3f", a / b}')
  printf '%-4s %12s %12s %12s %14s %12s\n' "$r" "$t1" "$t2" "$tm" "$ratio" "$speedup"
  ratios+=("$ratio") speedups+=("$speedup") ones+=("$t1") twos+=("$t2") copies+=("$tm")
done
printf '%-4s %12s %12s %12s %14s %12s\n' median \
  "$(printf '%s\n' "${ones[@]}" | median)" "$(printf '%s\n' "${twos[@]}" | median)" \
  "$(printf '%s\n' "${copies[@]}" | median)" "$(printf '%s\n' "${ratios[@]}" | median)" \
  "$(printf '%s\n' "${speedups[@]}" | median)"
