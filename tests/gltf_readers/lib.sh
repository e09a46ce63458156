# Shared by the tests/gltf_readers/*_check.sh scripts (sourced, not run):
#   js_require_packages  exit 77 (ctest: skipped) when node or the npm
#                        packages of tests/gltf_readers are missing;
#   js_check_glb GLB OUT write check_glb.mjs's summary (Khronos validator and
#                        three.js) of GLB to OUT; on failure print it and exit 1.
js_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

js_require_packages() {
  command -v node >/dev/null || { echo "node missing: skipped"; exit 77; }
  [ -f "$js_here/node_modules/three/package.json" ] ||
    { echo "tests/gltf_readers/node_modules missing (run scripts/bootstrap): skipped"; exit 77; }
}

js_check_glb() {
  node "$js_here/check_glb.mjs" "$1" > "$2" || { cat "$2"; echo "FAILED: validator or three.js on $1"; exit 1; }
}
