#!/usr/bin/env bash
# The training step of two revisions, alternated in one process
# (bench/train_revisions.cpp), on one thread (CPU 0) and on two (CPUs 0-1).
# Separate benchmark runs on a shared VM drift by 5-10 %, more than most
# changes to the step are worth; here both revisions see the same drift and
# the median of the per-round ratios B/A is steady to about 1 %.
#
# Each revision's deformer-module sources that train_mlp is built from
# (SOURCES below) are compiled with the flags of BUILD_DIR's charkit_deformer
# and with -Ddeformer=deformer_a (deformer_b), so both copies of
# charkit::deformer link into one program next to BUILD_DIR's charkit_core.
# Revisions from before the module was renamed (src/charkit/learn,
# charkit::learn) work too. A revision is anything `git archive` takes, or
# `worktree` for the working tree's src/.
# Usage: bench/compare_train_revisions.sh REV_A REV_B [ROUNDS] [STEPS] [BUILD_DIR]
#   ROUNDS (default 16) rounds of STEPS (default 1000) Adam steps per side.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
rev_a="$1" rev_b="$2" rounds="${3:-16}" steps="${4:-1000}" build="${5:-build/release}"
for rev in "$rev_a" "$rev_b"; do
  if [ "$rev" != worktree ] && ! git rev-parse --verify --quiet "$rev^{commit}" >/dev/null; then
    echo "compare_train_revisions: no such revision: $rev (a commit, branch or tag, or worktree)" >&2
    exit 2
  fi
done
SOURCES="mlp fused_product batch_kernels prng"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ninja -C "$build" charkit_core charkit_deformer >/dev/null
# charkit_deformer's compile flags (defines, optimisation, architecture), from
# the command that builds mlp.cpp, without the source root and outputs.
commands=$(ninja -C "$build" -t commands charkit_deformer)
read -r -a flags <<<"$(grep -m1 -- '/deformer/mlp\.cpp$' <<<"$commands" | tr ' ' '\n' |
  grep -E '^-(D|O|m|f|std=|isystem$)|^/usr/include' | tr '\n' ' ')"

extract() {  # REV DIR
  mkdir -p "$2"
  if [ "$1" = worktree ]; then
    cp -r src "$2/"
  else
    git archive "$1" src | tar -x -C "$2"
  fi
  # Revisions from before the rename: src/charkit/learn, namespace charkit::learn.
  if [ ! -e "$2/src/charkit/deformer" ]; then ln -s learn "$2/src/charkit/deformer"; fi
}

# The libxsmm glue lives in a file of its own in later revisions (its stand-in
# in disabled/ where the build leaves libxsmm out): compile the one the build does.
xsmm_source=$(grep -o -m1 -E '[^ ]*/deformer/(disabled/)?batch_kernels_xsmm\.cpp$' <<<"$commands" |
  sed -E 's|.*/(deformer/)|\1|' || true)
link_extra=()
# Earlier revisions said so in a macro; later ones build the file that calls libxsmm.
if grep -q -- '-DCHARKIT_WITH_XSMM=1' <<<"${flags[*]}" || [ "$xsmm_source" = deformer/batch_kernels_xsmm.cpp ]; then
  link_extra=(-lxsmm -lxsmmnoblas)
fi

compile() {  # NAME REV
  local name="$1" root="$out/$1" pids=() f extra sources="$SOURCES"
  extract "$2" "$root"
  if [ -n "$xsmm_source" ] && [ -e "$root/src/charkit/$xsmm_source" ]; then
    sources+=" ${xsmm_source#deformer/}"
    sources="${sources%.cpp}"
  fi
  for f in $sources; do
    extra=()
    [ "$f" = batch_kernels ] && extra=(-fno-math-errno)  # as deformer/CMakeLists.txt has it
    g++ "${flags[@]}" "${extra[@]}" -I"$root/src" -Ddeformer="deformer_$name" -Dlearn="deformer_$name" \
      -c "$root/src/charkit/deformer/$f.cpp" -o "$out/$name-${f//\//_}.o" &
    pids+=($!)
  done
  g++ "${flags[@]}" -I"$root/src" -Ddeformer="deformer_$name" -Dlearn="deformer_$name" -DCHARKIT_REVISION_WRAP="$name" \
    -c bench/train_revisions.cpp -o "$out/$name-wrap.o" &
  pids+=($!)
  for f in "${pids[@]}"; do wait "$f"; done
}

compile a "$rev_a"
compile b "$rev_b"
g++ "${flags[@]}" -Isrc bench/train_revisions.cpp "$out"/a-*.o "$out"/b-*.o \
  "$build/src/charkit/core/libcharkit_core.a" "${link_extra[@]}" -lcrypto -lpthread -o "$out/train_revisions"

short() { git rev-parse --short "$1" 2>/dev/null || echo "$1"; }
echo "A = $rev_a ($(short "$rev_a")), B = $rev_b ($(short "$rev_b"))"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
taskset -c 0 "$out/train_revisions" 1 "$rounds" "$steps"
taskset -c 0-1 "$out/train_revisions" 2 "$rounds" "$steps"
