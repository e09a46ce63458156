#!/usr/bin/env bash
# Headless end-to-end test of the Blender add-on charkit_deformer
# (python/blender/charkit_deformer) on the C library libcharkit_c.so:
#   tests/blender/deformer_addon_check.sh LIBCHARKIT_C OUT_DIR [TEST.py MARKER [window]]
# Runs tests/blender/deformer_addon_test.py (or TEST.py, whose last line is
# "MARKER OK" when it passes: the BEM panel's bem_addon_test.py with
# CHARKIT_BEM_TEST) in `blender --background
# --factory-startup` with CHARKIT_LIBRARY=LIBCHARKIT_C; passes only when the
# script prints its final OK line and Blender exits 0. The log is
# OUT_DIR/blender.log. A library built with AddressSanitizer (the dev preset)
# is run with libasan preloaded into Blender.
# With "window", Blender runs with a window on a virtual X server (xvfb-run,
# Debian's xvfb) and --enable-event-simulate, for tests of what the UI does
# (bem_ui_test.py); the script quits Blender itself.
# Exit 77 (skipped) when /usr/bin/blender, the library or (window) xvfb-run
# is absent.
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 4 ] || [ $# -eq 5 ] ||
  { echo "usage: $0 LIBCHARKIT_C OUT_DIR [TEST.py MARKER [window]]" >&2; exit 2; }
lib="$1" out="$2" script="${3:-deformer_addon_test.py}" marker="${4:-CHARKIT_DEFORMER_TEST}"
window="${5:-}"
[ -z "$window" ] || [ "$window" = window ] || { echo "$0: the fifth argument is 'window'" >&2; exit 2; }
name="${script%_test.py}"
here="$(cd "$(dirname "$0")" && pwd)"
blender=/usr/bin/blender
[ -x "$blender" ] || { echo "blender not installed ($blender): skipped"; exit 77; }
[ -f "$lib" ] || { echo "$lib not built: skipped"; exit 77; }
lib="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
log="$out/blender.log"

env_vars=(CHARKIT_LIBRARY="$lib")
# grep reads all of ldd's output (no -q): with pipefail, grep -q quitting at
# the first match can kill ldd with SIGPIPE and fail the test (seen in CI).
if ldd "$lib" 2>/dev/null | grep 'libasan' >/dev/null; then
  asan="$(gcc -print-file-name=libasan.so)"
  [ -f "$asan" ] || { echo "FAILED: $lib needs libasan, but gcc has none ($asan)"; exit 1; }
  # Blender itself is not instrumented: leaks at exit and its allocator pairs
  # are not ours to check.
  env_vars+=(LD_PRELOAD="$asan" ASAN_OPTIONS="detect_leaks=0:alloc_dealloc_mismatch=0")
fi

start=$(date +%s)
rc=0
if [ -n "$window" ]; then
  command -v xvfb-run >/dev/null || { echo "xvfb-run not installed (Debian: xvfb): skipped"; exit 77; }
  # Mesa's software OpenGL; the timeout ends a window that never quits.
  env "${env_vars[@]}" LIBGL_ALWAYS_SOFTWARE=1 timeout 180 xvfb-run -a -s "-screen 0 1280x800x24" \
    "$blender" --factory-startup --enable-event-simulate --python-exit-code 1 \
    --python "$here/$script" -- --out "$out" >"$log" 2>&1 || rc=$?
else
  env "${env_vars[@]}" "$blender" --background --factory-startup --python-exit-code 1 \
    --python "$here/$script" -- --out "$out" >"$log" 2>&1 || rc=$?
fi
secs=$(( $(date +%s) - start ))
ok="$(grep -E "^$marker (OK|FAILED)" "$log" | tail -1 || true)"
if [ "$rc" -ne 0 ] || [ "${ok%% *}" != "$marker" ] || [ "$(echo "$ok" | cut -d' ' -f2)" != "OK" ]; then
  cat "$log"
  echo "FAILED: Blender add-on test (exit status $rc, ${secs}s); log: $log"
  exit 1
fi
grep -E '^\[ *[0-9.]+s\]' "$log" || true
echo "$ok"
echo "$name: ${secs}s"
echo "$name: 1 passed, 0 failed"
