#!/usr/bin/env bash
# Small float32 GEMM libraries from Debian at the shapes of one charkit MLP training step
# (bench/gemm_libs_bench.cpp): Eigen, BLIS, libxsmm, oneDNN, next to the FMA peak measured in
# the same run. Builds the program with g++ directly (not CMake) for the libraries present:
#   apt-get install -y libbenchmark-dev libeigen3-dev libxsmm-dev libblis-dev libdnnl-dev
# Runs:
#   1. one thread pinned to CPU 0: every shape and the whole step, 5 repetitions (medians);
#   2. BLIS again with BLIS_ARCH_TYPE=0 (its skx sub-configuration): BLIS 0.9 does not know
#      every CPU (on AMD family 1Ah it picks its generic reference kernels);
#   3. the whole step with 2 threads (CPUs 0-1) for the libraries that thread (Eigen with
#      OpenMP, BLIS, oneDNN; libxsmm stays on one thread);
#   4. the whole step capped at AVX2, the fallback for CPUs without AVX-512: Eigen rebuilt with
#      -march=x86-64-v3, LIBXSMM_TARGET=hsw, ONEDNN_MAX_CPU_ISA=AVX2, BLIS_ARCH_TYPE=3 (haswell).
# Usage: bench/compare_gemm_libs.sh [REPETITIONS]   (exit 77: no library to compare)
set -euo pipefail
cd "$(dirname "$0")"
reps="${1:-5}"
src="$PWD/gemm_libs_bench.cpp"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
apt_line="apt-get install -y libbenchmark-dev libeigen3-dev libxsmm-dev libblis-dev libdnnl-dev"

# compiles and links a one-line program that includes header $1, with the flags that follow
probe() {
  local header="$1"
  shift
  printf '#include <%s>\nint main() { return 0; }\n' "$header" >"$out/probe.cpp"
  g++ -std=c++20 "$out/probe.cpp" -o "$out/probe" "$@" >/dev/null 2>&1
}

if ! probe benchmark/benchmark.h -lbenchmark -lpthread; then
  echo "Google Benchmark is missing: $apt_line" >&2
  exit 77
fi
defs=() libs=() names=()
eigen_cflags=$(pkg-config --cflags eigen3 2>/dev/null || echo -I/usr/include/eigen3)
if probe Eigen/Core $eigen_cflags; then
  defs+=(-DCHARKIT_HAVE_EIGEN=1 $eigen_cflags) names+=(Eigen)
fi
if probe blis.h -lblis; then
  defs+=(-DCHARKIT_HAVE_BLIS=1) libs+=(-lblis) names+=(BLIS)
fi
# Debian ships libxsmm as static archives; libxsmmnoblas satisfies its BLAS fallback symbols.
if probe libxsmm.h -lxsmm -lxsmmnoblas -lpthread -lrt -ldl -lm; then
  defs+=(-DCHARKIT_HAVE_XSMM=1) libs+=(-lxsmm -lxsmmnoblas -lrt -ldl -lm) names+=(libxsmm)
fi
if probe dnnl.hpp -ldnnl; then
  defs+=(-DCHARKIT_HAVE_DNNL=1) libs+=(-ldnnl) names+=(oneDNN)
fi
if [[ " ${names[*]-} " != *" BLIS "* && " ${names[*]-} " != *" libxsmm "* &&
      " ${names[*]-} " != *" oneDNN "* ]]; then
  echo "none of libxsmm, BLIS, oneDNN is installed: $apt_line" >&2
  exit 77
fi

build() {  # $1: output, $2: -march value
  g++ -O3 -march="$2" -std=c++20 -fopenmp -DNDEBUG "${defs[@]}" "$src" -o "$1" \
    -lbenchmark -lpthread "${libs[@]}"
}
echo "building for: ${names[*]}"
build "$out/bench" native
build "$out/bench_avx2" x86-64-v3

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
  "avx512f: $(grep -q avx512f /proc/cpuinfo && echo yes || echo no)"
echo "load before: $(uptime | sed 's/.*load average/load average/')"
common=(--benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true
        --benchmark_out_format=json)

# $1: json name, $2: threads, $3: CPUs, $4: filter; then env assignments and the binary
run() {
  local json="$1" threads="$2" cpus="$3" filter="$4"
  shift 4
  echo "== $json: $threads thread(s) on CPUs $cpus"
  env OMP_NUM_THREADS="$threads" BLIS_NUM_THREADS="$threads" CHARKIT_GEMM_THREADS="$threads" \
    "${@:1:$#-1}" taskset -c "$cpus" "${@: -1}" --benchmark_filter="$filter" "${common[@]}" \
    --benchmark_out="$out/$json.json"
}
run single 1 0 'FmaPeak/|BM_Gemm' "$out/bench"
if [[ " ${names[*]} " == *" BLIS "* ]]; then
  run blis_skx 1 0 'FmaPeak/512|/BLIS' BLIS_ARCH_TYPE=0 "$out/bench"
fi
# libgomp's default waiting (spin, then sleep) collapses when the other core is busy; a passive
# wait policy is measured too.
two_filter='FmaPeakThreads/512|BM_GemmStep/(Eigen|BLIS|oneDNN)'
run two 2 0-1 "$two_filter" "$out/bench"
run two_passive 2 0-1 "$two_filter" OMP_WAIT_POLICY=passive "$out/bench"
run avx2 1 0 'FmaPeak/256|BM_GemmStep' LIBXSMM_TARGET=hsw ONEDNN_MAX_CPU_ISA=AVX2 \
  BLIS_ARCH_TYPE=3 "$out/bench_avx2"
echo "load after: $(uptime | sed 's/.*load average/load average/')"

python3 - "$out" <<'EOF'
import json, os, sys

out = sys.argv[1]
shapes = ["fwd1_NN_128x128x300", "fwd23_NN_128x128x128", "dW1_TN_300x128x128",
          "dW23_TN_128x128x128", "dH_NT_128x128x128"]

def load(name):
    """{(case, library): GFLOP/s median or an error string}, context"""
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return {}, {}
    data = json.load(open(path))
    res = {}
    for b in data["benchmarks"]:
        parts = b["run_name"].split("/")
        if parts[0] in ("BM_FmaPeak", "BM_FmaPeakThreads"):
            key = ("peak", parts[1])
        elif parts[0] == "BM_Gemm":
            key = (parts[2], parts[1])
        elif parts[0] == "BM_GemmStep":
            key = ("step", parts[1])
        else:
            continue
        if b.get("error_occurred"):
            res[key] = "err"
        elif b.get("aggregate_name") == "median":
            res[key] = b["FLOP/s"] / 1e9
        elif b.get("run_type") == "iteration" and key not in res:  # --benchmark_repetitions=1
            res[key] = b["FLOP/s"] / 1e9
    return res, data["context"]

single, ctx = load("single")
skx, _ = load("blis_skx")
two, _ = load("two")
two_passive, _ = load("two_passive")
avx2, ctx2 = load("avx2")
for k, v in skx.items():
    if k[0] != "peak":
        single[(k[0], "BLIS(ARCH_TYPE=0)")] = v
peak1, peak256 = single.get(("peak", "512")), avx2.get(("peak", "256"))
peak2, peak2p = two.get(("peak", "512")), two_passive.get(("peak", "512"))
print("\ncontext: " + ", ".join(f"{k}={ctx[k]}" for k in ("blis_arch", "libxsmm_target", "dnnl_isa")
                                 if k in ctx)
      + " | AVX2-capped run: " + ", ".join(f"{k}={ctx2[k]}" for k in
                                          ("blis_arch", "libxsmm_target", "dnnl_isa") if k in ctx2))
fmt = lambda v: f"{v:.3g}" if isinstance(v, float) else str(v)
print(f"FMA peak, GFLOP/s: 512-bit 1 thread {fmt(peak1)}, 512-bit 2 threads {fmt(peak2)} "
      f"(passive-wait run {fmt(peak2p)}), 256-bit 1 thread {fmt(peak256)}")
pct = lambda v, p: f"{fmt(v)} ({100 * v / p:.0f}%)" if isinstance(v, float) and p else fmt(v)
libs = list(dict.fromkeys(lib for (case, lib) in single if case != "peak"))
head = (["library"] + [s.split("_")[0] for s in shapes]
        + ["step 1T", "step 2T", "step 2T passive", "step AVX2 1T"])
rows = [head]
for lib in libs:
    base = lib.split("(")[0]
    rows.append([lib] + [pct(single.get((s, lib), "-"), peak1) for s in shapes]
                + [pct(single.get(("step", lib), "-"), peak1),
                   pct(two.get(("step", lib), "-"), peak2) if lib == base else "-",
                   pct(two_passive.get(("step", lib), "-"), peak2p) if lib == base else "-",
                   pct(avx2.get(("step", lib), "-"), peak256) if lib == base else "-"])
print("median GFLOP/s (% of the FMA peak of that run: 512-bit for 1T and 2T, 256-bit for AVX2;\n"
      "1T rates per CPU second of the one thread, 2T rates per wall second)")
widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
for r in rows:
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
EOF
