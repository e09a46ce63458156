#!/usr/bin/env bash
# Peer comparison: `charkit motion convert` against three.js
# BVHLoader + the same projection in Node (bench/peer/bvh_threejs.mjs), on the
# same generated 100,000-frame BVH. Median wall time of RUNS runs each, peak
# RSS (/usr/bin/time -v) of one run each, and the ratio.
#   bench/compare_bvh.sh [RUNS] [FRAMES]
# BUILD=dir uses an existing release build (with apps/charkit/charkit and
# bench/bvh_bench) instead of building the `release` preset.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
frames=${2:-100000}
cd "$root"

if [[ -z "${BUILD:-}" ]]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target charkit bvh_bench >/dev/null
  BUILD=$root/build/release
fi
charkit=$BUILD/apps/charkit/charkit
gen=$BUILD/bench/bvh_bench
peer=$root/bench/peer/bvh_threejs.mjs
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package time)"; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" --write-bvh "$tmp/motion.bvh" "$frames"
echo "input: $frames frames, $(stat -c %s "$tmp/motion.bvh") bytes"

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
time_runs() {  # one duration in ms per run
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(now_ns)
    "$@" >/dev/null 2>&1
    t1=$(now_ns)
    echo $(( (t1 - t0) / 1000000 ))
  done
}
peak_kib() {  # peak RSS in KiB of one run
  /usr/bin/time -v "$@" 2>&1 >/dev/null | sed -n 's/.*Maximum resident set size (kbytes): *//p'
}

ours=("$charkit" motion convert "$tmp/motion.bvh" -o "$tmp/ours.ndjson")
theirs=(node --max-old-space-size=8192 "$peer" "$tmp/motion.bvh" "$tmp/peer.ndjson")

cat "$tmp/motion.bvh" >/dev/null  # page cache warm for both
"${ours[@]}"
"${theirs[@]}"
# Same frames out of both, and the same mapped points (first line, 6 digits).
[[ $(wc -l <"$tmp/ours.ndjson") == $(wc -l <"$tmp/peer.ndjson") ]] || { echo "line counts differ"; exit 1; }
python3 - "$tmp/ours.ndjson" "$tmp/peer.ndjson" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1]).readlines()[:1000]]
b = [json.loads(l) for l in open(sys.argv[2]).readlines()[:1000]]
worst = 0.0
for x, y in zip(a, b):
    for p, q in zip(x["points"], y["points"]):
        if p[3] == 1.0 and q[3] == 1.0:
            worst = max(worst, max(abs(u - v) for u, v in zip(p[:3], q[:3])))
print(f"agreement on mapped points, first 1000 frames: max |diff| = {worst:.2e}")
PY

ours_ms=$(time_runs "${ours[@]}" | median)
theirs_ms=$(time_runs "${theirs[@]}" | median)
ours_kib=$(peak_kib "${ours[@]}")
theirs_kib=$(peak_kib "${theirs[@]}")
echo "charkit motion convert: median ${ours_ms} ms, peak RSS $((ours_kib / 1024)) MiB"
echo "three.js BVHLoader + projection (node $(node --version)): median ${theirs_ms} ms, peak RSS $((theirs_kib / 1024)) MiB"
awk -v a="$ours_ms" -v b="$theirs_ms" 'BEGIN { printf "ratio (three.js / charkit): %.1fx\n", b / a }'
