// Internal: the kernels of the deformer module's batch paths (MLP training and
// batched inference; docs/deformer/batch.md): the one matrix-product entry and
// the elementwise ELU. Row-major float32.
// With libxsmm (CHARKIT_WITH_XSMM) the products run on kernels libxsmm
// generates at run time for the CPU at hand (AVX-512, AVX2, …), so a
// portable build is fast on the machine it runs on; Eigen's products are
// the fallback (built without libxsmm, or a shape libxsmm has no kernel for).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace charkit::deformer::detail {

/// Storage on 64-byte boundaries, for the batch paths' buffers (training
/// splits their rows and parameter ranges between cores: a row of 128
/// floats then fills whole cache lines, so no line is written by two cores,
/// where with malloc's 16-byte alignment every split shared one; and a
/// row's vector loads never straddle two lines).
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>& /*other*/) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t /*n*/) { ::operator delete (p, std::align_val_t{64}); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};
using AlignedFloats = std::vector<float, CacheLineAllocator<float>>;

enum class GemmBackend {
  kAuto,   ///< libxsmm where built with it and it has a kernel, else Eigen
  kEigen,  ///< always Eigen (tests compare the two)
};

/// C = op(A)·op(B) (beta 0) or C += op(A)·op(B) (beta 1), C m×n; op(A) m×k,
/// op(B) k×n; op(X) = Xᵀ when the flag is set. lda/ldb/ldc: the row strides
/// (in floats) of the matrices as stored (A stored k×m when ta). C must not
/// overlap A or B.
void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
          std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
          GemmBackend backend = GemmBackend::kAuto);

/// libxsmm's product of gemm()'s form, where libxsmm has a kernel for it;
/// false when it has none, and always in a build without libxsmm
/// (batch_kernels_xsmm.cpp or its stand-in).
bool xsmm_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
               std::size_t ldc);
/// libxsmm's target architecture; empty in a build without libxsmm.
std::string xsmm_target();

/// Which code dense_rows runs: the CPU's best (kAuto) or one named (tests
/// compare each with the scalar one; a kernel the CPU lacks falls back to
/// kScalar).
enum class DenseIsa { kAuto, kAvx512, kAvx2, kScalar };

/// y[r][o] = bias[o] + Σ_k x[r][k]·w[k][o] for r < rows, o < out (x rows×in,
/// w in×out, y rows×out, row-major, y not overlapping x or w): the dense
/// layer of MLP inference. Every output is one chain of fused multiply-adds
/// from bias[o] over k in order, whatever the ISA, the number of rows or the
/// blocking, so a row's outputs are the same bits in a batch of one and in
/// any batch (bake, `deformer run` and the C API agree with a single pose).
/// A library GEMM does not promise that (libxsmm's and Eigen's results
/// change with the row count). AVX-512 and AVX2+FMA kernels picked at run
/// time; the scalar kernel (std::fma) is the reference they are tested
/// against.
void dense_rows(const float* x, std::size_t rows, std::size_t in, const float* w, const float* bias,
                std::size_t out, float* y, DenseIsa isa = DenseIsa::kAuto);

/// dst[j][i] = src[i][j] for i < rows, j < cols (src rows×cols with row
/// stride lds, dst cols×rows with row stride ldd; no overlap): 16×16 blocks
/// in AVX-512 registers where the CPU has it (kAuto, kAvx512), the rest
/// element by element.
void transpose(const float* src, std::size_t rows, std::size_t cols, std::size_t lds, float* dst,
               std::size_t ldd, DenseIsa isa = DenseIsa::kAuto);

/// z[i] = z[i] > 0 ? z[i] : expm1(z[i]) for i < n (ELU, α = 1): a
/// polynomial expm1 (within 4 ulp of std::expm1, tests/deformer) in a loop
/// compiled for AVX-512, AVX2 and the baseline, the one for the CPU picked
/// at run time (GCC's target_clones).
void elu_inplace(float* z, std::size_t n);

/// out[r][c] = (x[r][c] - mean[c]) / sd[c] for rows × cols (the inputs'
/// standardisation, a division as MlpEvaluator::evaluate has it), compiled
/// like elu_inplace. out may be x.
void standardise_rows(const float* x, std::size_t rows, std::size_t cols, const float* mean,
                      const float* sd, float* out);

/// Adam's constants for one step (adam_step_constants). The moments are
/// kept scaled, m̃ = m/(1−β1) and ṽ = v/(1−β2): they update as m̃ = β1·m̃ + g
/// and ṽ = β2·ṽ + g², and the step p −= lr·m̂/(√v̂ + ε) (m̂ = m/(1−β1ᵗ),
/// v̂ = v/(1−β2ᵗ)) becomes p −= m̃ / (root_scale·√ṽ + floor). That is three
/// operations fewer per parameter than the textbook form (the products by
/// 1−β1, 1−β2 and lr), and the complements are rounded once, in the
/// constants (1 − 0.999 in float is 1.3e-5 off).
struct AdamStep {
  float beta1 = 0.9F, beta2 = 0.999F;
  float root_scale = 1.0F, floor = 1.0F;
};

/// The constants of step t ≥ 1, computed in double: root_scale =
/// (1−β1ᵗ)·√((1−β2)/(1−β2ᵗ)) / (lr·(1−β1)) and floor = (1−β1ᵗ)·ε / (lr·(1−β1)).
/// lr and ε must be > 0 and β1, β2 in [0, 1) (train_mlp checks).
AdamStep adam_step_constants(double beta1, double beta2, double lr, double eps, std::uint64_t t);

/// One Adam step over n parameters with scaled moments (AdamStep):
/// m̃ = β1·m̃ + g; ṽ = β2·ṽ + g²; p −= m̃ / (root_scale·√ṽ + floor). On
/// AVX-512 (kAuto or kAvx512) √ṽ and the division come from the reciprocal
/// estimates refined by a Newton step (each within 2 ulp); otherwise (kAvx2,
/// kScalar, other CPUs) a loop compiled like elu_inplace with the exact
/// square root and division.
void adam_step(float* p, const float* g, float* m, float* v, std::size_t n, const AdamStep& c,
               DenseIsa isa = DenseIsa::kAuto);

// ---- the elementwise steps of training (train_mlp), each one pass over its
// rows, compiled like elu_inplace. Bits depend on the build and the CPU's
// vector width (FMA contraction), never on the rows' split.

/// z[r][c] += bias[c] for r < rows, c < cols; then ELU in place when elu.
void bias_rows(float* z, std::size_t rows, std::size_t cols, const float* bias, bool elu);

/// out[r][c] = (x[idx[r]][c] - mean[c]) · inv_sd[c] for r < rows, c < cols:
/// the batch's rows gathered from the samples and standardised.
void gather_standardise(const float* x, std::size_t cols, const std::size_t* idx, std::size_t rows,
                        const float* mean, const float* inv_sd, float* out);

/// d = a[r][c] - y[idx[r]][c]; g[r][c] = scale·d; returns Σ d² (each row
/// summed over 16 lanes in a fixed order, the rows in order, in double).
double residual_rows(const float* a, const float* y, const std::size_t* idx, std::size_t rows,
                     std::size_t cols, float scale, float* g);

/// dz[i] = da[i] · min(a[i] + 1, 1) for i < n: ELU's derivative written
/// from its output (1 for z > 0, e^z = a + 1 otherwise). dz may be da.
void elu_backward(const float* da, const float* a, std::size_t n, float* dz);

/// out[c] = Σ_r m[r][c] over rows, for c in [c0, c1) (rows × ld, row-major;
/// rows summed in order): a bias gradient.
void column_sums(const float* m, std::size_t rows, std::size_t ld, std::size_t c0, std::size_t c1,
                 float* out);

/// The constants of the ELU's expm1 for x in [-87, 0], one polynomial for
/// batch_kernels.cpp's loop and fused_product.cpp's reference and AVX-512
/// kernel: n = round(x / ln 2) by adding and subtracting kShift, r = x − n·ln 2
/// with ln 2 = kLn2Hi + kLn2Lo, expm1(r) = r + r²·q(r) with q's Taylor
/// coefficients highest first (1/8! … 1/2!), expm1(x) = 2ⁿ·expm1(r) + (2ⁿ − 1).
namespace elu_expm1 {
inline constexpr float kLog2e = 1.44269504F;
inline constexpr float kShift = 12582912.0F;  // 1.5·2²³: the sum rounds to a whole number
inline constexpr float kLn2Hi = 0.693359375F;
inline constexpr float kLn2Lo = -2.12194440e-4F;
inline constexpr float kQ[7] = {1.0F / 40320.0F, 1.0F / 5040.0F, 1.0F / 720.0F, 1.0F / 120.0F,
                                1.0F / 24.0F,    1.0F / 6.0F,    0.5F};
/// 2ⁿ for t = x·log2(e) + kShift rounded: t and kShift share their exponent,
/// so t's low mantissa bits hold n. Integer arithmetic in unsigned, so a NaN
/// x (which makes the polynomial NaN anyway) is no float-to-int conversion
/// out of range, which C++ leaves undefined.
inline float two_to_n(float t) {
  const std::uint32_t n = std::bit_cast<std::uint32_t>(t) - std::bit_cast<std::uint32_t>(kShift);
  return std::bit_cast<float>((n + 127U) << 23);
}
}  // namespace elu_expm1

// ---- products with their epilogues (fused_product.cpp) -------------------

/// How FusedProduct::x gives X(r, k).
enum class FusedRows {
  kPerRow,  ///< X(r, k) = x[r][offset + k]: one pointer per row of y (A·B)
  kPerK,    ///< X(r, k) = x[k][offset + r]: one pointer per k (Aᵀ·B, a weight gradient)
};

/// What is done to a sum before it is stored.
enum class FusedEpilogue {
  kStore,    ///< y = sum
  kElu,      ///< y = ELU(sum), α = 1 (NaN passes)
  kEluGrad,  ///< y = sum · min(e + 1, 1): ELU's derivative from its output e
  kAdam,     ///< the sum is a gradient: one Adam step (*adam) on the parameters in y
  /// The output layer's loss gradient: d = sum − t[r][o]; y = scale·d; and
  /// lanes[r][o mod 16] = Σ d² over the row's columns in order (fused).
  kResidual,
};

struct AdamStep;

/// y[r][o] = epilogue(bias[o] + Σ_k X(r, k)·b[k][o]) for r < rows, o < cols
/// (bias null: from 0), the sum one chain of fused multiply-adds over k in
/// order. The rows of X come through pointers, so a batch's rows can be
/// read where they lie in the samples (no gathered copy) and Xᵀ·B needs no
/// transpose. y must not overlap the inputs.
struct FusedProduct {
  const float* const* x = nullptr;
  FusedRows layout = FusedRows::kPerRow;
  std::size_t offset = 0;
  std::size_t rows = 0, depth = 0, cols = 0;
  const float* b = nullptr;  ///< depth × cols, row stride ldb
  std::size_t ldb = 0;
  const float* bias = nullptr;
  FusedEpilogue epilogue = FusedEpilogue::kStore;
  const float* e = nullptr;  ///< kEluGrad: rows × cols, row stride lde
  std::size_t lde = 0;
  float* y = nullptr;  ///< rows × cols, row stride ldy
  std::size_t ldy = 0;
  float* m = nullptr;  ///< kAdam: Adam's moments, laid out as y
  float* v = nullptr;
  const AdamStep* adam = nullptr;
  const float* const* t = nullptr;  ///< kResidual: the targets, one row pointer per row
  float scale = 1.0F;
  float* lanes = nullptr;  ///< kResidual: rows × 16 sums of squares
  /// Fetch each block's epilogue lines (y for writing; m and v, the
  /// targets or e) while its sums run. For lines another core has just used
  /// (train_mlp on several threads): 1.5–3 % off a two-thread step; on
  /// one thread, where the lines are the core's own, 1.4–2.1 % slower.
  bool prefetch = false;
  /// kAdam only (ignored otherwise): when set and rows > 0, column_sums[o] =
  /// Σ_k b[k][o] for o < cols, summed in k order from 0 (column_sums' bits:
  /// the bias gradient of the layer whose dz is b).
  float* column_sums = nullptr;
};

/// Whether fused_product has a kernel on this CPU (AVX-512, GCC builds) and
/// is enabled.
bool fused_product_available();

/// Turns the fused products off (false) or back on for the whole process,
/// so that tests run the gemm path of train_mlp on AVX-512 CPUs too.
void set_fused_products(bool enabled);

/// Runs p on AVX-512 (six rows × 64 outputs per block; the same bits as
/// fused_product_reference for every epilogue) and returns true; returns
/// false, doing nothing, on a CPU (or a build) without the kernel, whatever
/// set_fused_products says (the caller then uses gemm and the elementwise
/// passes).
bool fused_product(const FusedProduct& p);

/// fused_product in scalar code (std::fma), the reference it is tested
/// against; kAdam runs adam_step (kAuto) on each row's sums.
void fused_product_reference(const FusedProduct& p);

/// What kAuto runs on this machine: "libxsmm (<target>)", e.g. "libxsmm
/// (cpx)" on an AVX-512 CPU, or "Eigen".
std::string gemm_backend_name();

}  // namespace charkit::deformer::detail
