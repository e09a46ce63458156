#!/usr/bin/env bash
# Runs the charkit Python package's tests (python/tests) against a built
# libcharkit_c and charkit CLI.
#
#   run_pytest.sh CHARKIT_LIBRARY CHARKIT_CLI DATA_DIR
#
# Uses Debian's /usr/bin/python3 (python3-pytest, python3-numpy). Preloads
# AddressSanitizer's runtime when the library links libasan (an ASan build
# loaded into a Python that is not). Exit status: pytest's, or 77 (skipped,
# for ctest's SKIP_RETURN_CODE) when /usr/bin/python3 lacks pytest or numpy,
# 2 for a usage error.
set -u

if [ "$#" -ne 3 ]; then
  echo "usage: $0 CHARKIT_LIBRARY CHARKIT_CLI DATA_DIR" >&2
  exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
python=/usr/bin/python3

abspath() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;; esac; }

if [ ! -x "$python" ]; then
  echo "run_pytest.sh: $python not found: skipped" >&2
  exit 77
fi
for module in pytest numpy; do
  if ! "$python" -c "import $module" >/dev/null 2>&1; then
    echo "run_pytest.sh: $python has no $module (apt-get install python3-$module): skipped" >&2
    exit 77
  fi
done

export CHARKIT_LIBRARY=$(abspath "$1")
export CHARKIT_CLI=$(abspath "$2")
export CHARKIT_DATA=$(abspath "$3")
export PYTHONPATH="$repo/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1

# An ASan-instrumented library needs the ASan runtime loaded first. libstdc++
# is preloaded with it: ASan resolves its __cxa_throw interceptor when it
# starts, and without libstdc++ in the process then (python does not link it)
# the first C++ exception thrown inside the library, even one it catches
# itself, aborts with "CHECK failed: ... real___cxa_throw".
if [ -f "$CHARKIT_LIBRARY" ] && command -v ldd >/dev/null 2>&1; then
  deps=$(ldd "$CHARKIT_LIBRARY" 2>/dev/null)
  asan=$(printf '%s\n' "$deps" | awk '/libasan/ { print $3; exit }')
  if [ -n "$asan" ]; then
    if [ ! -f "$asan" ] && command -v gcc >/dev/null 2>&1; then
      asan=$(gcc -print-file-name=libasan.so)
    fi
    preload=$asan
    stdcxx=$(printf '%s\n' "$deps" | awk '/libstdc\+\+/ { print $3; exit }')
    if [ -n "$stdcxx" ] && [ -f "$stdcxx" ]; then
      preload="$preload:$stdcxx"
    fi
    export LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}"
  fi
fi
# Python itself leaks by design at exit; the last setting wins.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# --capture=sys: output written to file descriptor 2 by native code (an ASan
# report before it ends the process) reaches the terminal instead of being lost
# with pytest's captured output.
exec "$python" -m pytest -q -rxX -p no:cacheprovider --capture=sys "$repo/python/tests"
