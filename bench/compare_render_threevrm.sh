#!/usr/bin/env bash
# `charkit render` against three.js + @pixiv/three-vrm on the project's test
# avatars (docs/render/compare_threevrm.md): per model, the silhouette IoU
# and the mean colour difference CIEDE2000 over the pixels both cover, from
# the same camera, light and image size. Goals (outlines off): IoU ≥ 0.98,
# mean ΔE00 ≤ 5. Prints three tables: outlines and shadows off (the goals);
# MToon outlines on in both renderers; shadows on, each renderer with its own
# shadow map. Needs Debian's chromium and
# web/node_modules (scripts/bootstrap); exit 77 (skipped) without them.
#   bench/compare_render_threevrm.sh [--size WxH] [MODEL.vrm ...]
# CHARKIT=path runs that binary instead of building the release preset's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
charkit=${CHARKIT:-}
if [[ -z $charkit ]]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target charkit_all charkit >/dev/null
  charkit=$root/build/release/apps/charkit/charkit
fi
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
node bench/compare_render_threevrm.mjs --charkit "$charkit" "$@"
echo
node bench/compare_render_threevrm.mjs --charkit "$charkit" --outlines "$@" | tail -n +2
echo
node bench/compare_render_threevrm.mjs --charkit "$charkit" --shadows "$@" | tail -n +2
