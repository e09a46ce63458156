// Small float32 GEMMs of one charkit MLP training step (300 -> 128 -> 128 -> 128, ELU, batch 128)
// with the libraries Debian ships: Eigen, BLIS, libxsmm and oneDNN, next to one core's measured
// FMA peak. Standalone, built by bench/compare_gemm_libs.sh (not by CMake); each library is
// compiled in only where its CHARKIT_HAVE_{EIGEN,BLIS,XSMM,DNNL} macro is 1.
//
// All matrices are row-major: C[m x n] = op(A) op(B), A stored m x k (k x m when transposed),
// B stored k x n (n x k when transposed). Every case checks its first product against a scalar
// reference before timing. Counter: FLOP/s (2 m n k per product), as a rate.
// Threads: CHARKIT_GEMM_THREADS (default 1) for Eigen (with -fopenmp), BLIS and oneDNN; oneDNN's
// Debian build uses OpenMP, so OMP_NUM_THREADS must agree (the script sets both).
#include <immintrin.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#if CHARKIT_HAVE_EIGEN
#include <Eigen/Core>
#endif
#if CHARKIT_HAVE_BLIS
#include <blis.h>
#endif
#if CHARKIT_HAVE_XSMM
#include <libxsmm.h>
#endif
#if CHARKIT_HAVE_DNNL
#include <dnnl.hpp>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

struct Shape {
  const char* name;
  int m, n, k;
  bool ta, tb;
  double Flops() const { return 2.0 * m * n * k; }
};

constexpr Shape kFwd1{"fwd1_NN_128x128x300", 128, 128, 300, false, false};
constexpr Shape kFwd23{"fwd23_NN_128x128x128", 128, 128, 128, false, false};
constexpr Shape kDw1{"dW1_TN_300x128x128", 300, 128, 128, true, false};
constexpr Shape kDw23{"dW23_TN_128x128x128", 128, 128, 128, true, false};
constexpr Shape kDh{"dH_NT_128x128x128", 128, 128, 128, false, true};
constexpr Shape kShapes[] = {kFwd1, kFwd23, kDw1, kDw23, kDh};
// The products of one step in order: forward through 3 layers, then layer 3 (dW3, dH2),
// layer 2 (dW2, dH1) and layer 1 (dW1 only: the inputs need no gradient).
constexpr Shape kStep[] = {kFwd1, kFwd23, kFwd23, kDw23, kDh, kDw23, kDh, kDw1};

int Threads() {
  const char* env = std::getenv("CHARKIT_GEMM_THREADS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 1;
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

Buffer RandomBuffer(size_t count, std::mt19937& rng) {
  const size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  Buffer buf(static_cast<float*>(std::aligned_alloc(64, bytes)));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < count; ++i) buf[i] = dist(rng);
  return buf;
}

struct Operands {
  Operands(const Shape& s, unsigned seed) {
    std::mt19937 rng(seed);
    a = RandomBuffer(size_t(s.m) * s.k, rng);
    b = RandomBuffer(size_t(s.k) * s.n, rng);
    c = RandomBuffer(size_t(s.m) * s.n, rng);  // garbage: every library must overwrite C
  }
  Buffer a, b, c;
};

// max |C - ref| / max |ref| against a double-precision triple loop.
double RelativeError(const Shape& s, const float* a, const float* b, const float* c) {
  double max_diff = 0, max_ref = 0;
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int p = 0; p < s.k; ++p) {
        const float x = s.ta ? a[size_t(p) * s.m + i] : a[size_t(i) * s.k + p];
        const float y = s.tb ? b[size_t(j) * s.k + p] : b[size_t(p) * s.n + j];
        sum += double(x) * y;
      }
      max_diff = std::max(max_diff, std::abs(c[size_t(i) * s.n + j] - sum));
      max_ref = std::max(max_ref, std::abs(sum));
    }
  }
  return max_diff / std::max(max_ref, 1e-30);
}

using GemmFn = std::function<void(const float* a, const float* b, float* c)>;
struct Kernel {
  GemmFn fn;          // empty: the library cannot do this shape
  std::string label;  // how it is done (kernel kind, implementation name)
};
struct Library {
  const char* name;
  Kernel (*make)(const Shape&);
};

#if CHARKIT_HAVE_EIGEN
Kernel MakeEigen(const Shape& s) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return {[s](const float* a, const float* b, float* c) {
            Eigen::Map<const Mat> A(a, s.ta ? s.k : s.m, s.ta ? s.m : s.k);
            Eigen::Map<const Mat> B(b, s.tb ? s.n : s.k, s.tb ? s.k : s.n);
            Eigen::Map<Mat> C(c, s.m, s.n);
            if (s.ta && s.tb) {
              C.noalias() = A.transpose() * B.transpose();
            } else if (s.ta) {
              C.noalias() = A.transpose() * B;
            } else if (s.tb) {
              C.noalias() = A * B.transpose();
            } else {
              C.noalias() = A * B;
            }
          },
          "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
              std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION)};
}
#endif

#if CHARKIT_HAVE_BLIS
Kernel MakeBlis(const Shape& s) {
  // Typed API with the row-major strides of the stored matrices; op() via the trans flags.
  return {[s](const float* a, const float* b, float* c) {
            float one = 1.0f, zero = 0.0f;
            const inc_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
            bli_sgemm(s.ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                      s.tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s.m, s.n, s.k, &one,
                      const_cast<float*>(a), lda, 1, const_cast<float*>(b), ldb, 1, &zero, c, s.n,
                      1);
          },
          std::string("bli_sgemm, arch ") + bli_arch_string(bli_arch_query_id())};
}
#endif

#if CHARKIT_HAVE_XSMM
// libxsmm is column-major: a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
// and a row-major stored matrix read column-major is its transpose. So B's storage is the first
// operand (transposed there iff tb) and A's storage the second (transposed iff ta).
Kernel MakeXsmm(const Shape& s) {
  const libxsmm_blasint m = s.n, n = s.m, k = s.k, ldc = s.n;
  const libxsmm_blasint lda = s.tb ? s.k : s.n, ldb = s.ta ? s.m : s.k;
  const float alpha = 1.0f, beta = 0.0f;
  const int flags = (s.tb ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (s.ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  const std::string arch = libxsmm_get_target_arch();
  if (libxsmm_smmfunction f =
          libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr)) {
    return {[f](const float* a, const float* b, float* c) { f(b, a, c); },
            "JIT " + arch + (flags != 0 ? ", transposed operand in kernel" : "")};
  }
  if (flags == 0) return {};
  // No JIT kernel for the transposed form: transpose the operand into a scratch buffer
  // (libxsmm_otrans, column-major m x n in -> n x m out), then the plain kernel.
  const libxsmm_blasint nn_lda = s.n, nn_ldb = s.k;
  const int nn_flags = 0;
  libxsmm_smmfunction f =
      libxsmm_smmdispatch(m, n, k, &nn_lda, &nn_ldb, &ldc, &alpha, &beta, &nn_flags, nullptr);
  if (f == nullptr) return {};
  auto scratch = std::make_shared<std::vector<float>>(size_t(s.k) * std::max(s.m, s.n));
  return {[f, s, scratch](const float* a, const float* b, float* c) {
            float* t = scratch->data();
            if (s.ta) {
              libxsmm_otrans(t, a, sizeof(float), s.m, s.k, s.m, s.k);  // -> row-major m x k
              a = t;
            } else {
              libxsmm_otrans(t, b, sizeof(float), s.k, s.n, s.k, s.n);  // -> row-major k x n
              b = t;
            }
            f(b, a, c);
          },
          "otrans + JIT " + arch};
}
#endif

#if CHARKIT_HAVE_DNNL
const char* DnnlIsa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

Kernel MakeDnnlSgemm(const Shape& s) {
  // dnnl_sgemm takes row-major matrices, like cblas_sgemm(CblasRowMajor, ...).
  return {[s](const float* a, const float* b, float* c) {
            dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a, s.ta ? s.m : s.k,
                       b, s.tb ? s.k : s.n, 0.0f, c, s.n);
          },
          std::string("dnnl_sgemm, isa ") + DnnlIsa()};
}

// A matmul primitive made once; each call only swaps the data handles.
Kernel MakeDnnlMatmul(const Shape& s) {
  using dnnl::memory;
  struct State {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    memory a, b, c;
    dnnl::matmul prim;
    std::unordered_map<int, memory> args;
  };
  auto st = std::make_shared<State>();
  const auto f32 = memory::data_type::f32;
  const memory::desc a_md({s.m, s.k}, f32, s.ta ? memory::dims{1, s.m} : memory::dims{s.k, 1});
  const memory::desc b_md({s.k, s.n}, f32, s.tb ? memory::dims{1, s.k} : memory::dims{s.n, 1});
  const memory::desc c_md({s.m, s.n}, f32, memory::dims{s.n, 1});
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), st->engine);
  st->prim = dnnl::matmul(pd);
  st->a = memory(a_md, st->engine, DNNL_MEMORY_NONE);
  st->b = memory(b_md, st->engine, DNNL_MEMORY_NONE);
  st->c = memory(c_md, st->engine, DNNL_MEMORY_NONE);
  st->args = {{DNNL_ARG_SRC, st->a}, {DNNL_ARG_WEIGHTS, st->b}, {DNNL_ARG_DST, st->c}};
  return {[st](const float* a, const float* b, float* c) {
            st->a.set_data_handle(const_cast<float*>(a));
            st->b.set_data_handle(const_cast<float*>(b));
            st->c.set_data_handle(c);
            st->prim.execute(st->stream, st->args);
            st->stream.wait();
          },
          std::string("matmul ") + pd.impl_info_str() + ", isa " + DnnlIsa()};
}
#endif

// Times the products back to back; each has its own operands, as in a real step.
void RunProducts(benchmark::State& state, const Library& lib, std::span<const Shape> shapes) {
  std::vector<Operands> ops;
  std::vector<GemmFn> fns;
  std::string label;
  double flops = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    ops.emplace_back(s, 1234u + unsigned(i));
    Kernel kernel = lib.make(s);
    if (!kernel.fn) {
      state.SkipWithError((std::string(lib.name) + ": no kernel for " + s.name).c_str());
      return;
    }
    kernel.fn(ops[i].a.get(), ops[i].b.get(), ops[i].c.get());
    const double err = RelativeError(s, ops[i].a.get(), ops[i].b.get(), ops[i].c.get());
    if (!(err < 1e-4)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "%s %s: relative error %.3g", lib.name, s.name, err);
      state.SkipWithError(msg);
      return;
    }
    if (label.find(kernel.label) == std::string::npos) {
      label += (label.empty() ? "" : "; ") + kernel.label;
    }
    fns.push_back(std::move(kernel.fn));
    flops += s.Flops();
  }
  for (auto _ : state) {
    for (size_t i = 0; i < fns.size(); ++i) fns[i](ops[i].a.get(), ops[i].b.get(), ops[i].c.get());
    benchmark::ClobberMemory();
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(flops * double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(label);
}

// FMA peak: 24 independent accumulator chains, more than latency x FMA pipes on any current
// core, so only the FMA throughput limits them. Runtime-valued operands keep them unfolded.
constexpr int kChains = 24;
constexpr long kRounds = 1 << 15;
volatile float g_seed = 1.0f, g_mul = 0.999999f, g_add = 1e-7f;

__attribute__((target("avx512f"))) float Fma512(long rounds) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(g_seed + float(i));
  const __m512 mul = _mm512_set1_ps(g_mul), add = _mm512_set1_ps(g_add);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], mul, add);
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) float Fma256(long rounds) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(g_seed + float(i));
  const __m256 mul = _mm256_set1_ps(g_mul), add = _mm256_set1_ps(g_add);
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], mul, add);
  }
  for (int i = 1; i < kChains; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  alignas(32) float out[8];
  _mm256_store_ps(out, acc[0]);
  return out[0] + out[7];
}

// Runs the chains on state.range(0) OpenMP threads at once (1: the timing thread alone).
template <int kLanes>
void BM_FmaPeak(benchmark::State& state) {
  const bool ok = kLanes == 16 ? __builtin_cpu_supports("avx512f")
                               : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!ok) {
    state.SkipWithError(kLanes == 16 ? "no AVX-512F" : "no AVX2/FMA");
    return;
  }
  const int threads = int(state.range(0));
  auto chains = [] { benchmark::DoNotOptimize(kLanes == 16 ? Fma512(kRounds) : Fma256(kRounds)); };
  for (auto _ : state) {
    if (threads == 1) {
      chains();
    } else {
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
      chains();
#else
      state.SkipWithError("built without OpenMP");
      return;
#endif
    }
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * kLanes * kChains * kRounds * threads * double(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void SetThreads(int threads) {
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
#if CHARKIT_HAVE_EIGEN
  Eigen::setNbThreads(threads);
#endif
#if CHARKIT_HAVE_BLIS
  bli_thread_set_num_threads(threads);
#endif
  benchmark::AddCustomContext("gemm_threads", std::to_string(threads));
}

}  // namespace

int main(int argc, char** argv) {
  SetThreads(Threads());
  static const std::vector<Library> libs = {
#if CHARKIT_HAVE_EIGEN
    {"Eigen", MakeEigen},
#endif
#if CHARKIT_HAVE_BLIS
    {"BLIS", MakeBlis},
#endif
#if CHARKIT_HAVE_XSMM
    {"libxsmm", MakeXsmm},
#endif
#if CHARKIT_HAVE_DNNL
    {"oneDNN-sgemm", MakeDnnlSgemm},
    {"oneDNN-matmul", MakeDnnlMatmul},
#endif
  };
#if CHARKIT_HAVE_BLIS
  benchmark::AddCustomContext("blis_arch", bli_arch_string(bli_arch_query_id()));
#endif
#if CHARKIT_HAVE_XSMM
  benchmark::AddCustomContext("libxsmm_target", libxsmm_get_target_arch());
#endif
#if CHARKIT_HAVE_DNNL
  benchmark::AddCustomContext("dnnl_isa", DnnlIsa());
#endif
  // Rates are per CPU second of the timing thread with one thread (robust against other
  // processes on a pinned core), per wall second when several threads work.
  const bool wall = Threads() > 1;
  benchmark::RegisterBenchmark("BM_FmaPeak/512", BM_FmaPeak<16>)->Arg(1);
  benchmark::RegisterBenchmark("BM_FmaPeak/256", BM_FmaPeak<8>)->Arg(1);
  if (wall) {
    benchmark::RegisterBenchmark("BM_FmaPeakThreads/512", BM_FmaPeak<16>)
        ->Arg(Threads())
        ->UseRealTime();
  }
  auto timing = [wall](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMicrosecond);
    if (wall) b->UseRealTime();
  };
  for (const Library& lib : libs) {
    for (const Shape& s : kShapes) {
      timing(benchmark::RegisterBenchmark(
          ("BM_Gemm/" + std::string(lib.name) + "/" + s.name).c_str(),
          [&lib, &s](benchmark::State& st) { RunProducts(st, lib, std::span(&s, 1)); }));
    }
    timing(benchmark::RegisterBenchmark(
        ("BM_GemmStep/" + std::string(lib.name)).c_str(),
        [&lib](benchmark::State& st) { RunProducts(st, lib, kStep); }));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
