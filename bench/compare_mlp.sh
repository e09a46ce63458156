#!/usr/bin/env bash
# Side-by-side MLP benchmarks on this machine:
#  - training (300 inputs, 2 x 128 ELU, 128 outputs, batch 128, 5000 Adam steps):
#    charkit (bench/mlp_bench) vs numpy (OpenBLAS) vs PyTorch CPU, with 1 and 2 threads;
#  - single-pose inference of that network: charkit's MlpEvaluator and ONNX
#    runner vs onnxruntime-node, on the network PyTorch exported.
# Needs the peers (not part of the test bootstrap, they are large):
#   apt-get install python3-numpy libopenblas0-pthread python3-torch
#   (cd bench/peer && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save onnxruntime-node)
# Usage: bench/compare_mlp.sh [BUILD_DIR] [REPEATS]
#   BUILD_DIR: a release build with CHARKIT_BUILD_BENCH=ON (default build/bench, configured
#   here with -DCHARKIT_ARCH=native -DCHARKIT_OPENMP=ON when absent; OMP_NUM_THREADS picks the threads).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/bench}"
reps="${2:-3}"
py=/usr/bin/python3
if [ ! -f "$build/build.ninja" ]; then
  cmake --preset release -B "$build" -DCHARKIT_ARCH=native -DCHARKIT_OPENMP=ON >/dev/null
fi
ninja -C "$build" mlp_bench charkit >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== training, 5000 steps, median of $reps (seconds)"
for threads in 1 2; do
  export OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
  ours=$(for i in $(seq "$reps"); do
    taskset -c 0-$((threads - 1)) "$build/bench/mlp_bench" --benchmark_filter="BM_MlpTrain/5000/$threads/" \
      --benchmark_format=json 2>/dev/null |
      $py -c 'import json,sys; d=json.load(sys.stdin); print(min(b["real_time"] for b in d["benchmarks"] if b.get("run_type")=="iteration")/1e3)'
  done | median)
  np_s=$(for i in $(seq "$reps"); do
    taskset -c 0-$((threads - 1)) $py bench/peer/mlp_numpy.py --iterations 5000 |
      $py -c 'import json,sys; print(json.loads(sys.stdin.readline())["seconds"])'
  done | median)
  torch_s=$(for i in $(seq "$reps"); do
    taskset -c 0-$((threads - 1)) $py bench/peer/mlp_torch.py --iterations 5000 --threads "$threads" |
      $py -c 'import json,sys; print(json.loads(sys.stdin.readline())["seconds"])'
  done | median)
  echo "threads=$threads charkit=$ours numpy=$np_s torch=$torch_s" \
       "numpy/charkit=$($py -c "print(round($np_s/$ours,2))")" \
       "torch/charkit=$($py -c "print(round($torch_s/$ours,2))")"
done

echo "== single-pose inference (microseconds per pose, 1 thread)"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
$py bench/peer/mlp_torch.py --iterations 200 --onnx "$out/mlp.onnx" >/dev/null
CHARKIT_BENCH_ONNX="$out/mlp.onnx" taskset -c 0 "$build/bench/mlp_bench" \
  --benchmark_filter='BM_MlpInferOnePose|BM_OnnxInferOnePose' --benchmark_min_time=1 \
  --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true 2>/dev/null |
  grep -E "median" || true
if [ -f bench/peer/node_modules/onnxruntime-node/package.json ]; then
  taskset -c 0 node bench/peer/mlp_ort.mjs "$out/mlp.onnx" "$reps"
else
  echo "onnxruntime-node: not installed (see the header of this script)"
fi
