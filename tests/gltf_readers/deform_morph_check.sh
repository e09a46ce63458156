#!/usr/bin/env bash
# `charkit deform morph` on a VRM with named morph targets, checked by the
# Khronos glTF validator and three.js (check_glb.mjs), and numerically against
# three.js's own reading of the input's targets (morph_compare.mjs).
#   tests/gltf_readers/deform_morph_check.sh CHARKIT_BINARY MODEL OUT_DIR
# Exit 77 (skipped) when node or the npm packages are missing.
set -euo pipefail
charkit="$1" model="$2" out="$3"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
js_require_packages
mkdir -p "$out"
glb="$out/morphed.glb"
"$charkit" deform morph "$model" -o "$glb" --weights blink_left=1,ah=0.5
js_check_glb "$glb" "$out/check.json"
# Godette keeps its names in the primitive extras (VRM 0.x), which three.js
# does not read: blink_left is target 3, ah target 5.
node "$here/morph_compare.mjs" "$model" "$glb" 3=1 5=0.5
echo "deform morph: passed"
