# Shared by the server benches (bench/compare_upload.sh,
# bench/compare_job_memory.sh); sourced, not run. The caller sets `me` (its
# name, for messages) and `build` (a build folder) first.
#   bench_setup TOOL...     checks $build's charkit and the tools; sets
#                           `charkit` and `work` (a temporary folder removed
#                           at exit, with any server still running)
#   start_serve DATA ARG... starts `charkit serve` on a free loopback port
#                           with the data folder DATA; sets `pid`, `base`
#   stop_serve              stops it
#   mem FIELD               a /proc status field of the server in MiB
#                           (VmRSS, VmHWM)

bench_setup() {
  charkit="$build/apps/charkit/charkit"
  if [ ! -x "$charkit" ]; then
    echo "$me: no $charkit (build it: cmake --build $build --target charkit)" >&2
    exit 2
  fi
  local tool
  for tool in "$@"; do
    command -v "$tool" > /dev/null || { echo "$me: $tool is needed" >&2; exit 2; }
  done
  work=$(mktemp -d)
  pid=
  trap 'stop_serve; rm -rf "$work"' EXIT
}

start_serve() {
  local data=$1
  shift
  "$charkit" serve --listen 127.0.0.1:0 --data "$data" --quiet "$@" 2> "$work/serve.log" &
  pid=$!
  local port=
  for _ in $(seq 200); do
    port=$(sed -n 's/.*listening on [a-z]*:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { echo "$me: the server did not start: $(cat "$work/serve.log")" >&2; exit 1; }
  base="http://127.0.0.1:$port"
}

stop_serve() {
  if [ -n "$pid" ]; then kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; fi
  pid=
}

mem() { awk -v k="$1:" '$1 == k {print int($2 / 1024)}' "/proc/$pid/status"; }
