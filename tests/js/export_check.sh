#!/usr/bin/env bash
# Exports every example package with `charkit bem export` and checks each GLB
# with the Khronos glTF validator and three.js's GLTFLoader (check_glb.mjs).
#   tests/js/export_check.sh CHARKIT_BINARY EXAMPLES_DIR OUT_DIR
# Exit 77 (skipped) when node or the npm packages are missing.
set -euo pipefail
charkit="$1" examples="$2" out="$3"
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
js_require_packages
mkdir -p "$out"
n=0
for f in "$examples"/*.bem "$examples"/*.zip; do
  [ -e "$f" ] || continue
  name="$(basename "$f")"
  glb="$out/${name%.*}-${name##*.}.glb"
  "$charkit" bem export "$f" -o "$glb"
  summary="$(node "$here/check_glb.mjs" "$glb")" || { echo "$summary"; echo "FAILED: $name"; exit 1; }
  # three.js must have built at least one mesh from the export.
  echo "$summary" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const j = JSON.parse(s);
      if (!j.three || !j.three.meshes || j.three.meshes.length === 0) { console.error("no mesh"); process.exit(1); }
      console.log(`${j.file}: ${j.three.meshes.length} mesh node(s), validator ${j.validator.errors} errors, ${j.validator.warnings} warnings`);
    });'
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no example packages in $examples"; exit 1; }
echo "$n passed, 0 failed"
