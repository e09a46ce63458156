#!/usr/bin/env bash
# `charkit deformer bake` output (relative shape keys added to the rig's
# glTF) checked by the Khronos glTF validator and three.js (check_glb.mjs):
# sample → train → bake on RiggedSimple.glb (the baked file must validate
# with 0 errors).
#   tests/gltf_readers/bake_check.sh CHARKIT_BINARY RIG OUT_DIR
# Exit 77 (skipped) when node or the npm packages are missing.
set -euo pipefail
charkit="$1" rig="$2" out="$3"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
js_require_packages
mkdir -p "$out"
"$charkit" deformer sample "$rig" -q --bones joint_3 --poses 40 --seed 1 -o "$out/d.npz"
"$charkit" deformer train "$out/d.npz" -q --kind linear -o "$out/m.json"
"$charkit" deformer bake "$out/m.json" -q "$rig" --sample 3 -o "$out/baked.glb"
js_check_glb "$out/baked.glb" "$out/check.json"
echo "deformer bake: the baked GLB passes the validator and three.js"
