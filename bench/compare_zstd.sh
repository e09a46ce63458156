#!/usr/bin/env bash
# Peer comparison: `charkit bem validate` on a ~256 MiB package of zstd
# payloads against `zstd -d` decoding the same frames, median of RUNS runs
# each (default 5), plus charkit's peak RSS. Builds the release preset first.
# The package is generated deterministically into a temporary folder.
#   bench/compare_zstd.sh [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
cd "$root"

cmake --preset release >/dev/null
cmake --build --preset release >/dev/null
charkit=$root/build/release/apps/charkit/charkit
gen=$root/build/release/bench/bem_validate_bench

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
info=$("$gen" --write "$tmp")
echo "package: $info"
largest=$(sed -n 's/.*largest_decoded=\([0-9]*\).*/\1/p' <<<"$info")

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
time_runs() {  # prints one duration in ms per run
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(now_ns)
    "$@" >/dev/null
    t1=$(now_ns)
    echo $(( (t1 - t0) / 1000000 ))
  done
}

# Warm the page cache so both sides read from memory.
cat "$tmp/big.bem" "$tmp"/frames/*.zst >/dev/null
"$charkit" bem validate "$tmp/big.bem" >/dev/null || { echo "charkit says the package is invalid:"; "$charkit" bem validate "$tmp/big.bem" | tail -20; exit 1; }

charkit_ms=$(time_runs "$charkit" bem validate "$tmp/big.bem" | median)
zstd_ms=$(time_runs zstd -d -q -c "$tmp"/frames/*.zst | median)
rss_kib=$(/usr/bin/time -v "$charkit" bem validate "$tmp/big.bem" 2>&1 >/dev/null |
          sed -n 's/.*Maximum resident set size (kbytes): //p')

awk -v c="$charkit_ms" -v z="$zstd_ms" -v r="$rss_kib" -v l="$largest" -v n="$runs" 'BEGIN {
  ratio = c / z; rss = r / 1024; budget = l / 1048576 + 64;
  printf "runs per side:            %d (median)\n", n;
  printf "charkit bem validate:     %d ms\n", c;
  printf "zstd -d (same frames):    %d ms\n", z;
  printf "ratio charkit/zstd:       %.2fx (goal <= 1.3x): %s\n", ratio, ratio <= 1.3 ? "met" : "NOT met";
  printf "charkit peak RSS:         %.1f MiB (goal <= largest payload %.1f MiB + 64 = %.1f MiB): %s\n",
         rss, l / 1048576, budget, rss <= budget ? "met" : "NOT met";
}'
