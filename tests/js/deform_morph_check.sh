#!/usr/bin/env bash
# `charkit deform morph` on a VRM with named morph targets, checked by the
# Khronos glTF validator and three.js (check_glb.mjs), and numerically against
# three.js's own reading of the input's targets (morph_compare.mjs).
#   tests/js/deform_morph_check.sh CHARKIT_BINARY MODEL OUT_DIR
# Exit 77 (skipped) when node or the npm packages are missing.
set -euo pipefail
charkit="$1" model="$2" out="$3"
here="$(cd "$(dirname "$0")" && pwd)"
command -v node >/dev/null || { echo "node missing: skipped"; exit 77; }
[ -f "$here/node_modules/three/package.json" ] || { echo "tests/js/node_modules missing (run scripts/bootstrap): skipped"; exit 77; }
mkdir -p "$out"
glb="$out/morphed.glb"
"$charkit" deform morph "$model" -o "$glb" --weights blink_left=1,ah=0.5
node "$here/check_glb.mjs" "$glb" > "$out/check.json" || { cat "$out/check.json"; echo "FAILED: validator or three.js"; exit 1; }
# Godette keeps its names in the primitive extras (VRM 0.x), which three.js
# does not read: blink_left is target 3, ah target 5.
node "$here/morph_compare.mjs" "$model" "$glb" 3=1 5=0.5
echo "deform morph: passed"
