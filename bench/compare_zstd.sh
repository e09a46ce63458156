#!/usr/bin/env bash
# Peer comparison: `charkit bem validate` on a ~256 MiB package of zstd
# payloads against `zstd -d` decoding the same frames, median of RUNS runs
# each (default 5), plus charkit's peak RSS. Builds the release preset first.
# The package is generated deterministically into a temporary folder.
#
# charkit runs with --threads 1 and with its default (one thread per core);
# the runs of the three commands alternate, so a noisy neighbour slows them
# alike. The JSON reports of both thread counts must be identical.
#   bench/compare_zstd.sh [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
cd "$root"

cmake --preset release >/dev/null
cmake --build --preset release --target charkit bem_validate_bench >/dev/null
charkit=$root/build/release/apps/charkit/charkit
# The program that holds every command group: the launcher runs charkit-bem
# for `bem` (docs/cli.md §Programs); this shows what loading the rest costs.
charkit_all=$root/build/release/apps/charkit/charkit-all
gen=$root/build/release/bench/bem_validate_bench

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
info=$("$gen" --write "$tmp")
echo "package: $info"
largest=$(sed -n 's/.* largest_decoded=\([0-9]*\).*/\1/p' <<<"$info")
second=$(sed -n 's/.*second_largest_decoded=\([0-9]*\).*/\1/p' <<<"$info")
cores=$(nproc)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $cores cores, zstd $(zstd -V | grep -o 'v[0-9.]*' | head -1)"

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ms_of() {  # one run of the command, its wall time in ms
  local t0 t1
  t0=$(now_ns)
  "$@" >/dev/null
  t1=$(now_ns)
  echo $(( (t1 - t0) / 1000000 ))
}

# Warm the page cache so every side reads from memory.
cat "$tmp/big.bem" "$tmp"/frames/*.zst >/dev/null
"$charkit" bem validate "$tmp/big.bem" >/dev/null || { echo "charkit says the package is invalid:"; "$charkit" bem validate "$tmp/big.bem" | tail -20; exit 1; }

# The report must not depend on the thread count.
"$charkit" bem validate --json --threads 1 "$tmp/big.bem" >"$tmp/one.json"
"$charkit" bem validate --json "$tmp/big.bem" >"$tmp/all.json"
if cmp -s "$tmp/one.json" "$tmp/all.json"; then same=identical; else same=DIFFERENT; fi

: >"$tmp/t1"; : >"$tmp/tn"; : >"$tmp/z"; : >"$tmp/ta"; : >"$tmp/ratio"
for _ in $(seq "$runs"); do
  ms_of "$charkit" bem validate --threads 1 "$tmp/big.bem" >>"$tmp/t1"
  tn=$(ms_of "$charkit" bem validate "$tmp/big.bem")
  z=$(ms_of zstd -d -q -c "$tmp"/frames/*.zst)
  ms_of "$charkit_all" bem validate "$tmp/big.bem" >>"$tmp/ta"
  echo "$tn" >>"$tmp/tn"; echo "$z" >>"$tmp/z"
  awk -v a="$tn" -v b="$z" 'BEGIN { printf "%.4f\n", a / b }' >>"$tmp/ratio"
done
one_ms=$(median <"$tmp/t1")
all_ms=$(median <"$tmp/tn")
zstd_ms=$(median <"$tmp/z")
full_ms=$(median <"$tmp/ta")
ratio=$(median <"$tmp/ratio")
rss_of() {
  /usr/bin/time -v "$@" 2>&1 >/dev/null | sed -n 's/.*Maximum resident set size (kbytes): //p'
}
rss_one=$(rss_of "$charkit" bem validate --threads 1 "$tmp/big.bem")
rss_all=$(rss_of "$charkit" bem validate "$tmp/big.bem")

awk -v c1="$one_ms" -v cn="$all_ms" -v z="$zstd_ms" -v r1="$rss_one" -v rn="$rss_all" \
    -v l="$largest" -v l2="$second" -v n="$runs" -v k="$cores" -v same="$same" \
    -v ca="$full_ms" -v rr="$ratio" 'BEGIN {
  r_one = c1 / z; r_all = rr;
  b1 = l / 1048576 + 64; b2 = (l + l2) / 1048576 + 64;
  printf "runs per side:                  %d (median, interleaved)\n", n;
  printf "charkit bem validate --threads 1: %d ms\n", c1;
  printf "charkit bem validate (%d threads): %d ms (%.2fx the one-thread time)\n", k, cn, c1 / cn;
  printf "the same through charkit-all:   %d ms (every library loaded at start-up)\n", ca;
  printf "zstd -d (same frames):          %d ms\n", z;
  printf "ratio one thread / zstd:        %.2fx (goal <= 1.3x): %s\n", r_one, r_one <= 1.3 ? "met" : "NOT met";
  printf "ratio %d threads / zstd:         %.2fx (median of the rounds ratios; goal <= 0.55x): %s\n", k, r_all, r_all <= 0.55 ? "met" : "NOT met";
  printf "peak RSS, one thread:           %.1f MiB (goal <= largest %.1f MiB + 64 = %.1f MiB): %s\n",
         r1 / 1024, l / 1048576, b1, r1 / 1024 <= b1 ? "met" : "NOT met";
  printf "peak RSS, %d threads:            %.1f MiB (goal <= two largest %.1f MiB + 64 = %.1f MiB): %s\n",
         k, rn / 1024, (l + l2) / 1048576, b2, rn / 1024 <= b2 ? "met" : "NOT met";
  printf "JSON report, 1 vs %d threads:    %s\n", k, same;
}'
