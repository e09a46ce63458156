#!/usr/bin/env bash
# Exports every example package with `charkit bem export` and imports each
# GLB into Blender (headless) with Blender's glTF importer (import_glb.py);
# the imported mesh count and each mesh's vertex count must match the GLB.
#   tests/blender/export_check.sh CHARKIT_BINARY EXAMPLES_DIR OUT_DIR
# Exit 77 (skipped) when Blender is not installed (it is not part of
# scripts/bootstrap: it is large, and this check is for machines that have it).
set -euo pipefail
charkit="$1" examples="$2" out="$3"
here="$(cd "$(dirname "$0")" && pwd)"
command -v blender >/dev/null || { echo "blender not installed: skipped"; exit 77; }
mkdir -p "$out"
n=0
for f in "$examples"/*.bem "$examples"/*.zip; do
  [ -e "$f" ] || continue
  name="$(basename "$f")"
  glb="$out/${name%.*}-${name##*.}.glb"
  "$charkit" bem export "$f" -o "$glb"
  log="$out/${name%.*}-${name##*.}.blender.log"
  if ! blender -b --factory-startup --python-exit-code 1 -P "$here/import_glb.py" -- "$glb" >"$log" 2>&1; then
    cat "$log"; echo "FAILED: $name: Blender import"; exit 1
  fi
  line="$(grep '^CHARKIT_BLENDER ' "$log" | head -1)"
  [ -n "$line" ] || { cat "$log"; echo "FAILED: $name: no summary"; exit 1; }
  # Compare with the GLB's own JSON: one Blender mesh object per glTF mesh
  # node, with the vertices each primitive's indices use, summed over its
  # primitives (Blender's importer keeps a primitive's used vertices and
  # merges the primitives into one mesh; it may weld nothing). Two
  # primitives (draws) that share one POSITION accessor count apart.
  python3 - "$glb" "${line#CHARKIT_BLENDER }" <<'PY'
import json, struct, sys
glb, summary = sys.argv[1], json.loads(sys.argv[2])
data = open(glb, "rb").read()
magic, version, length = struct.unpack_from("<4sII", data, 0)
assert magic == b"glTF" and version == 2 and length == len(data), "bad GLB header"
clen, ctype = struct.unpack_from("<II", data, 12)
doc = json.loads(data[20:20 + clen])
blen, btype = struct.unpack_from("<II", data, 20 + clen)
assert btype == 0x004E4942, "no BIN chunk"
binary = data[28 + clen:28 + clen + blen]


def used_vertices(prim):
    if "indices" not in prim:
        return doc["accessors"][prim["attributes"]["POSITION"]]["count"]
    acc = doc["accessors"][prim["indices"]]
    view = doc["bufferViews"][acc["bufferView"]]
    fmt = {5121: "B", 5123: "H", 5125: "I"}[acc["componentType"]]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    return len(set(struct.unpack_from("<%d%s" % (acc["count"], fmt), binary, start)))


expected = []
for node in doc.get("nodes", []):
    if "mesh" in node:
        mesh = doc["meshes"][node["mesh"]]
        expected.append(sum(used_vertices(p) for p in mesh["primitives"]))
got = sorted(m["vertices"] for m in summary["meshes"])
if sorted(expected) != got:
    sys.exit(f"{glb}: Blender meshes have {got} vertices, GLB nodes {sorted(expected)}")
print(f"{glb}: {len(got)} mesh(es) in Blender, vertices {got}, images {len(summary['images'])}")
PY
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "no example packages in $examples"; exit 1; }
echo "$n passed, 0 failed"
