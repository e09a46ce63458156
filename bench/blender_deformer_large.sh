#!/usr/bin/env bash
# The Blender pose-deformer add-on's steps timed on a large mesh
# (bench/blender_deformer_large.py), in Debian's Blender with a release build's
# C library. Default: a 50,000-vertex tube (250 rings of 200), 40 poses,
# 1,000 Neural iterations.
# Usage: bench/blender_deformer_large.sh [BUILD_DIR] [-- --rings R --around A --poses N --iterations I]
set -euo pipefail
cd "$(dirname "$0")/.."
build="build/release"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build="$1"; shift; fi
[ "${1:-}" = "--" ] && shift
lib="$build/src/charkit/capi/libcharkit_c.so"
[ -x /usr/bin/blender ] || { echo "blender_deformer_large: /usr/bin/blender is not installed" >&2; exit 2; }
if [ ! -f "$lib" ]; then
  cmake --build "$build" --target charkit_c >/dev/null
fi
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(blender --version 2>/dev/null | head -1)"
CHARKIT_LIBRARY="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")" \
  blender --background --factory-startup --python-exit-code 1 \
  --python bench/blender_deformer_large.py -- "$@" 2>&1 | grep -E '^BENCH|Error|error' || true
