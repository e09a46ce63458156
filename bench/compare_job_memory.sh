#!/usr/bin/env bash
# Peak memory of `charkit serve` while it validates hostile packages, with the
# per-job memory budget (the default) and without it (--job-max-memory 0),
# in one run. Three small ZIP packages are written here (Python's zipfile):
#   inflate512  one extra payload of 512 MiB of zeros as DEFLATE (0.5 MB)
#   inflate16   16 extra payloads of 100 MiB each (1.6 MB)
#   values      a manifest with 1.4 million empty objects (4 MB of text, 6 KB)
# For each package and each budget a fresh server (3 job workers) gets the
# package once, then three copies at once (different bytes, so three jobs);
# the server's resident memory before the uploads (VmRSS) and its peak once
# every job is done (VmHWM) are printed with each record's verdict.
# Usage: bench/compare_job_memory.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
me=compare_job_memory
# shellcheck source=bench/lib/serve.sh
. bench/lib/serve.sh
bench_setup curl python3

# The packages: a valid BEM 1.5 ZIP (the shipped example) plus the hostile part;
# copy K differs from the others in its ZIP comment.
python3 - "$work" tests/data/examples/example-1.5.zip << 'EOF'
import sys, zipfile
work, example = sys.argv[1], sys.argv[2]
src = zipfile.ZipFile(example)
members = [(i, src.read(i.filename)) for i in src.infolist()]
def write(name, extra=(), manifest=None):
    for k in range(3):
        with zipfile.ZipFile(f"{work}/{name}-{k}.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
            for info, data in members:
                z.writestr(info.filename, manifest if manifest and info.filename == "manifest.json" else data)
            for n, (size, count) in enumerate(extra):
                for c in range(count):
                    z.writestr("payloads/%04d.bin" % (len(members) - 1 + n + c), bytes(size))
            z.comment = b"copy %d" % k
text = src.read("manifest.json").decode()
junk = text.rstrip()[:-1] + ',"junk":[' + ",".join(["{}"] * 1_390_000) + "]}"
write("inflate512", [(512 << 20, 1)])
write("inflate16", [(100 << 20, 16)])
write("values", manifest=junk)
EOF

# run NAME COPIES BUDGET_ARGS...: a fresh server validates COPIES packages at once.
run() {
  local name=$1 copies=$2
  shift 2
  local data=$work/data-$name-$copies-$#
  rm -rf "$data"
  local token
  token=$("$charkit" token create --scope write --name bench --data "$data" -q)
  start_serve "$data" --workers 3 "$@"
  local before ids=() k
  before=$(mem VmRSS)
  for k in $(seq 0 $((copies - 1))); do
    ids+=("$(curl -sS -X POST -T "$work/$name-$k.zip" -H 'Expect:' \
      -H 'Content-Type: application/octet-stream' -H "Authorization: Bearer $token" \
      "$base/api/packages?filename=$name-$k.zip" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')")
  done
  local verdicts=
  for id in "${ids[@]}"; do
    local v=unknown
    for _ in $(seq 1200); do
      v=$(curl -sS -H "Authorization: Bearer $token" "$base/api/packages/$id" |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("validity"))')
      { [ "$v" = valid ] || [ "$v" = invalid ]; } && break
      sleep 0.1
    done
    local code
    code=$(curl -sS -H "Authorization: Bearer $token" "$base/api/packages/$id/report" |
      python3 -c 'import json,sys; r=json.load(sys.stdin); print(r.get("budget", {}).get("code", "-"))')
    verdicts+="$v/$code "
  done
  printf '%-11s %6s %-22s %10s MiB %10s MiB  %s\n' "$name" "$copies" "${*:-(default)}" \
    "$before" "$(mem VmHWM)" "$verdicts"
  stop_serve
}

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "charkit: $charkit ($("$charkit" --version))"
ls -l "$work"/*-0.zip | awk '{printf "  %s: %d bytes\n", $NF, $5}' | sed "s|$work/||"
printf '%-11s %6s %-22s %14s %14s  %s\n' package copies budget "RSS before" "peak RSS" "validity/budget code"
for name in inflate512 inflate16 values; do
  for copies in 1 3; do
    run "$name" "$copies"
    run "$name" "$copies" --job-max-memory 0
  done
done
