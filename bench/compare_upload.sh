#!/usr/bin/env bash
# Upload speed of `charkit serve` beside the limits that bound it, on the same
# bytes in one run: `sha256sum` of the file (the server hashes every upload),
# the upload (POST /api/motions with a write token, as a client streams it),
# and the download of the stored blob (GET /api/assets/SHA256). Each size is
# measured ROUNDS times with fresh random bytes; the medians and the ratio
# upload / sha256sum are printed, with the server's resident memory (RSS)
# before the first upload and its peak (VmHWM) after each size.
# The server runs with no job workers, so only the upload is timed.
# Usage: bench/compare_upload.sh [SIZES_MIB] [ROUNDS] [BUILD_DIR]
#   SIZES_MIB  comma-separated sizes in MiB (default 64,512; the server's
#              upload limit is raised to the largest)
#   ROUNDS     runs per size (default 5)
#   BUILD_DIR  the build whose charkit runs (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="${1:-64,512}" rounds="${2:-5}" build="${3:-build/release}"
me=compare_upload
# shellcheck source=bench/lib/serve.sh
. bench/lib/serve.sh
bench_setup curl sha256sum

largest=0
IFS=, read -r -a size_list <<< "$sizes"
for s in "${size_list[@]}"; do
  [[ "$s" =~ ^[1-9][0-9]*$ ]] || { echo "compare_upload: a size is a whole number of MiB: $s" >&2; exit 2; }
  [ "$s" -gt "$largest" ] && largest=$s
done

data=$work/data
token=$("$charkit" token create --scope write --name bench --data "$data" -q)
start_serve "$data" --workers 0 --max-upload $((largest * 1048576))

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "charkit: $charkit ($("$charkit" --version))"
echo "server RSS before the first upload: $(mem VmRSS) MiB"
printf '%8s %12s %12s %12s %10s %14s %12s\n' size sha256sum upload download "up/sha" "upload MB/s" "peak RSS"
for s in "${size_list[@]}"; do
  : > "$work/sha" ; : > "$work/up" ; : > "$work/down"
  for _ in $(seq "$rounds"); do
    f=$work/body.bin
    head -c $((s * 1048576)) /dev/urandom > "$f"
    cat "$f" > /dev/null  # in the page cache for every reader alike
    sync                  # no dirty pages of earlier runs to throttle this one's writes
    t0=$(now); digest=$(sha256sum "$f" | cut -d' ' -f1); t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f\n", b - a}' >> "$work/sha"
    code=$(curl -sS -o "$work/reply.json" -w '%{http_code} %{time_total}' -X POST -T "$f" \
      -H 'Expect:' -H 'Content-Type: application/octet-stream' \
      -H "Authorization: Bearer $token" "$base/api/motions?filename=bench-$s.bvh")
    case "$code" in
      200* | 201*) ;;
      *) echo "compare_upload: upload answered $code: $(cat "$work/reply.json")" >&2; exit 1 ;;
    esac
    echo "${code#* }" >> "$work/up"
    grep -q "$digest" "$work/reply.json" ||
      { echo "compare_upload: the server's digest differs from sha256sum's: $(cat "$work/reply.json")" >&2; exit 1; }
    down=$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' \
      -H "Authorization: Bearer $token" "$base/api/assets/$digest")
    [ "${down%% *}" = 200 ] || { echo "compare_upload: download answered $down" >&2; exit 1; }
    echo "${down#* }" >> "$work/down"
  done
  sha=$(median < "$work/sha") up=$(median < "$work/up") dn=$(median < "$work/down")
  awk -v s="$s" -v sha="$sha" -v up="$up" -v dn="$dn" -v peak="$(mem VmHWM)" 'BEGIN {
    printf "%6sMiB %11.3fs %11.3fs %11.3fs %10.2f %14.0f %9s MiB\n", s, sha, up, dn, up / sha,
      s * 1.048576 / up, peak }'
done
echo "(medians of $rounds runs each; up/sha is the upload's time over sha256sum's on the same bytes)"
