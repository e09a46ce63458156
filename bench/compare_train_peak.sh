#!/usr/bin/env bash
# The training performance goals on this machine, measured in one run:
#  - one thread: the whole training step (BM_MlpTrain/5000/1: 300 inputs,
#    2 x 128 ELU, 128 outputs, batch 128, Adam, 5000 steps) as a share of one
#    core's float32 FMA peak (bench/fma_peak_bench, BM_Fma512, measured in
#    the same round on the same core); goal >= 70 %;
#  - two threads (BM_MlpTrain/5000/2 on CPUs 0-1) against one: goal >= 1.7x;
#    its ceiling on this machine is what a core pays for lines the other core
#    has just used, measured first by bench/core_transfer_bench (RESULTS.md,
#    "two threads — what the cores pay each other").
# Each round runs the peak, then one thread, then two; the ratios are taken
# inside a round and the medians over rounds are printed. With --products,
# each round also runs every product of a step alone on CPU 0
# (bench/fused_product_bench, median of 3) and the medians of their shares of
# that round's peak are printed at the end.
# Usage: bench/compare_train_peak.sh [BUILD_DIR] [ROUNDS] [--products]
#   BUILD_DIR: a build with CHARKIT_BUILD_BENCH=ON (default build/release).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
build="${1:-build/release}"
rounds="${2:-5}"
products="${3:-}"
if [ -n "$products" ] && [ "$products" != --products ]; then
  echo "compare_train_peak: unknown option $products (--products or nothing)" >&2
  exit 2
fi
py=/usr/bin/python3
ninja -C "$build" mlp_bench fma_peak_bench core_transfer_bench fused_product_bench >/dev/null
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# The median over a program's repetitions of one JSON field.
field() {
  $py -c 'import json,sys,statistics
d=json.load(sys.stdin); k=sys.argv[1]
print(statistics.median(b[k] for b in d["benchmarks"] if b.get("run_type")=="iteration"))' "$1"
}
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
# ns per 64-byte line (median of 5) for each core_transfer_bench case at 142 KiB.
read -r rd_other rd_own wr_other wr_own < <("$build/bench/core_transfer_bench" \
  --benchmark_filter='/142/' --benchmark_repetitions=5 --benchmark_format=json 2>/dev/null |
  $py -c 'import json,sys,statistics
d=json.load(sys.stdin); v={}
for b in d["benchmarks"]:
    if b.get("run_type")=="iteration": v.setdefault(b["run_name"].split("/")[1],[]).append(b["ns_per_line"])
m=lambda k: statistics.median(v[k])
print(" ".join("%.2f" % m(k) for k in ("ReadAfterOtherWrote", "ReadOwn",
                                       "WriteAfterOtherRead", "WriteOwn")))')
echo "cross-core ns per line: read after the other core wrote $rd_other (own lines $rd_own)," \
  "write after the other core read $wr_other (own lines $wr_own)"
# The ceiling of two pieces (RESULTS.md, "two threads — what the cores pay
# each other"): half the one-thread time plus, every step and piece, 4,272
# lines read that the other core wrote (its weight rows in phase 1: 2,224;
# its dz rows and half its activation rows in phase 2: 2,048) and 4,272
# lines written that the other core has read (the same, the other way), each
# at the cross-core price less what an own line costs.
cross_ms=$($py -c "print(round(5000 * 4272 * (($rd_other - $rd_own) + ($wr_other - $wr_own)) / 1e6))")
echo "cross-core cost of 5000 two-piece steps: $cross_ms ms"
echo "round  peak_GFLOPs  t1_ms  t1_GFLOPs  t1_share  t2_ms  speed_up  ceiling"
share=() speed=() ceiling=()
product_json=$(mktemp)
trap 'rm -f "$product_json"' EXIT
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
  c=$($py -c "print(round($t1/($t1/2 + $cross_ms), 3))")
  share+=("$s") speed+=("$u") ceiling+=("$c")
  if [ -n "$products" ]; then
    # One JSON line per round: the peak and each product's median FLOP/s.
    taskset -c 0 "$build/bench/fused_product_bench" --benchmark_repetitions=3 \
      --benchmark_format=json 2>/dev/null | $py -c 'import json,sys,statistics
d=json.load(sys.stdin); v={}
for b in d["benchmarks"]:
    if b.get("run_type")=="iteration": v.setdefault(b["run_name"],[]).append(b["FLOP/s"])
print(json.dumps({"peak": float(sys.argv[1]) * 1e9,
                  "products": {k: statistics.median(x) for k, x in v.items()}}))' "$peak" \
      >>"$product_json"
  fi
  printf '%5d  %11.1f  %5.0f  %9.1f  %8s  %5.0f  %8s  %7s\n' "$r" \
    "$peak" "$t1" "$($py -c "print($f1/1e9)")" "$s" "$t2" "$u" "$c"
done
echo "median share of the FMA peak (one thread): $(printf '%s\n' "${share[@]}" | median) (goal >= 0.70)"
echo "median two threads / one thread:           $(printf '%s\n' "${speed[@]}" | median) (goal >= 1.7;" \
  "ceiling from the cross-core costs $(printf '%s\n' "${ceiling[@]}" | median))"
if [ -n "$products" ]; then
  echo "each product of a step alone (bench/fused_product_bench), median over rounds:"
  $py -c 'import json,sys,statistics
rounds=[json.loads(l) for l in open(sys.argv[1])]
for name in rounds[0]["products"]:
    g=[r["products"][name] / 1e9 for r in rounds]
    s=[r["products"][name] / r["peak"] for r in rounds]
    print("  %-52s %6.1f GFLOP/s  %.3f of the peak" % (name.replace("BM_FusedProduct/", ""),
          statistics.median(g), statistics.median(s)))' "$product_json"
fi
