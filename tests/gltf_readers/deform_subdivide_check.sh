#!/usr/bin/env bash
# `charkit deform subdivide` on a VRM (skinned, morph targets, UV seams),
# everywhere and with the distance control, checked by the Khronos glTF
# validator and three.js (check_glb.mjs): 0 errors, and three.js's index
# count equal to the triangles the command reports.
#   tests/gltf_readers/deform_subdivide_check.sh CHARKIT_BINARY MODEL OUT_DIR
# Exit 77 (skipped) when node or the npm packages are missing.
set -euo pipefail
charkit="$1" model="$2" out="$3"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
js_require_packages
mkdir -p "$out"
check() {
  local name="$1"; shift
  "$charkit" deform subdivide "$model" -o "$out/$name.glb" --json "$@" > "$out/$name.json"
  js_check_glb "$out/$name.glb" "$out/$name.check.json"
  node -e '
    const fs = require("fs");
    const run = JSON.parse(fs.readFileSync(process.argv[1]));
    const check = JSON.parse(fs.readFileSync(process.argv[2]));
    const tris = run.meshes.reduce((s, m) => s + m.trianglesOut, 0);
    const split = run.meshes.reduce((s, m) => s + m.edgesSplit, 0);
    const edges = run.meshes.reduce((s, m) => s + m.edges, 0);
    const three = check.three.meshes.reduce((s, m) => s + m.indices, 0);
    if (three !== 3 * tris) { console.error(`three.js reads ${three} indices, the run says ${tris} triangles`); process.exit(1); }
    if (check.validator.errors !== 0) { console.error("validator errors"); process.exit(1); }
    const want = process.argv[3];
    if (want === "all" && split !== edges) { console.error(`${split} of ${edges} edges split`); process.exit(1); }
    if (want === "some" && !(split > 0 && split < edges)) { console.error(`${split} of ${edges} edges split`); process.exit(1); }
    console.log(`${process.argv[1]}: ${split} of ${edges} edges split, ${tris} triangles`);
  ' "$out/$name.json" "$out/$name.check.json" "$name"
}
check all
check some --reference 0,1.4,0.6 --projection-ratio 20
echo "deform subdivide: passed"
