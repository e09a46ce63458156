#!/usr/bin/env bash
# Pose-driven deformer quality with default settings: for each test rig,
# pose count and range, sample a dataset (`deformer sample`, Delta Mush
# targets), train each model kind with `deformer train`'s defaults (linear,
# neural, and neural on the engine's input layout, as the Blender add-on
# trains it) and print
# the train and held-out errors beside no correction (plain skinning: the
# held-out poses' correction size). A model whose held-out error is above no
# correction makes unseen poses worse than skinning alone.
#
#   bench/deformer_quality.sh [CHARKIT]     (default: build/release/apps/charkit/charkit)
#   POSES="40" RANGES="45" KINDS="neural" TRAIN_OPTS="--weight-decay 0.1" bench/deformer_quality.sh
#
# Prints a Markdown table (the one in bench/RESULTS.md, "Deformer quality").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
charkit="${1:-$root/build/release/apps/charkit/charkit}"
[ -x "$charkit" ] || { echo "no charkit at $charkit: build the release preset or give its path" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
data="$root/tests/data/models"

# rig label | file | bones
rigs=(
  "RiggedSimple (1 bone)|$data/RiggedSimple.glb|joint_3"
  "Godette arm (2 bones)|$data/Godette_vrm_v4.vrm|upper_arm.r_Armature,lowerarm.r_Armature"
  "Godette leg (2 bones)|$data/Godette_vrm_v4.vrm|thigh.l_Armature,shin.l_Armature"
  "CesiumMan (all 19)|$data/CesiumMan.glb|all"
)
poses_list=(${POSES:-40 60})
ranges=(${RANGES:-45 20})
kinds=(${KINDS:-linear neural neural-engine})

field() {  # field FILE KEY: stats.KEY.mean from a --json summary
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.4g" % d["stats"][sys.argv[2]]["mean"])' "$1" "$2"
}

echo "| rig | poses | range | model | train | held-out | no correction | held-out / none |"
echo "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"
for rig in "${rigs[@]}"; do
  IFS='|' read -r label file bones <<<"$rig"
  for poses in "${poses_list[@]}"; do
    for range in "${ranges[@]}"; do
      for layout in axis-angle engine; do
        "$charkit" deformer sample "$file" --bones "$bones" --range "$range" --poses "$poses" \
          --layout "$layout" -q -o "$work/d_$layout.npz" > /dev/null
      done
      for kind in "${kinds[@]}"; do
        # neural-engine: the engine's input layout, as the Blender add-on trains
        layout=axis-angle
        [ "$kind" = neural-engine ] && layout=engine
        out="$work/m.json"
        # shellcheck disable=SC2086  # TRAIN_OPTS: extra `deformer train` options, split
        "$charkit" deformer train "$work/d_$layout.npz" --kind "${kind%-engine}" -q --json \
          ${TRAIN_OPTS:-} -o "$out" > "$work/s.json"
        tr=$(field "$work/s.json" train)
        ho=$(field "$work/s.json" holdout)
        no=$(field "$work/s.json" uncorrectedHoldout)
        ratio=$(python3 -c "print('%.2f' % ($ho / $no))")
        echo "| $label | $poses | ±$range° | $kind | $tr | $ho | $no | $ratio |"
      done
    done
  done
done
