#!/usr/bin/env bash
# Exports every example package with `charkit bem export` and checks each GLB
# with the Khronos glTF validator and three.js's GLTFLoader (check_glb.mjs);
# then the packages with sliders in tests/data/sliders, whose sliders are
# exported as morph targets: three.js must build them with their names.
#   tests/gltf_readers/export_check.sh CHARKIT_BINARY EXAMPLES_DIR OUT_DIR
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
for f in "$examples"/../sliders/*.bem; do
  [ -e "$f" ] || continue
  name="$(basename "$f")"
  glb="$out/${name%.*}.glb"
  "$charkit" bem export "$f" -o "$glb"
  summary="$(node "$here/check_glb.mjs" "$glb")" || { echo "$summary"; echo "FAILED: $name"; exit 1; }
  echo "$summary" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const j = JSON.parse(s);
      const m = j.three.meshes[0];
      if (j.validator.errors !== 0 || m.morphTargets !== 2 || m.morphNames.join() !== "belly,shoulders") {
        console.error(JSON.stringify(j)); process.exit(1);
      }
      console.log(`${j.file}: morph targets ${m.morphNames.join(", ")}, validator ${j.validator.errors} errors`);
    });'
  n=$((n + 1))
done
echo "$n passed, 0 failed"
