// detail::gemm, the deformer module's one matrix product, and detail::elu_inplace against a scalar
// reference: every transpose form, strides wider than the matrices, beta 0
// and 1, the shapes of the MLP's training step and odd ones, on the backend
// this build picks (libxsmm where built with it) and on Eigen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "charkit/deformer/detail/batch_kernels.h"
#include "charkit/deformer/detail/prng.h"

using namespace charkit::deformer;
using detail::GemmBackend;

namespace {

struct Case {
  std::size_t m, n, k;
};

void check(const Case& s, bool ta, bool tb, float beta, GemmBackend backend) {
  Rng r(s.m * 131 + s.n * 17 + s.k + (ta ? 1 : 0) + (tb ? 2 : 0));
  // Stored shapes (row-major) with a padded row stride each.
  const std::size_t ar = ta ? s.k : s.m, ac = ta ? s.m : s.k;
  const std::size_t br = tb ? s.n : s.k, bc = tb ? s.k : s.n;
  const std::size_t lda = ac + 3, ldb = bc + 5, ldc = s.n + 2;
  std::vector<float> a(ar * lda), b(br * ldb), c(s.m * ldc), want(s.m * ldc);
  for (float& v : a) v = static_cast<float>(r.uniform(-1.0, 1.0));
  for (float& v : b) v = static_cast<float>(r.uniform(-1.0, 1.0));
  for (std::size_t i = 0; i < c.size(); ++i)
    c[i] = want[i] = static_cast<float>(r.uniform(-1.0, 1.0));
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t j = 0; j < s.n; ++j) {
      double sum = beta == 0.0F ? 0.0 : want[i * ldc + j];
      for (std::size_t p = 0; p < s.k; ++p)
        sum += double{ta ? a[p * lda + i] : a[i * lda + p]} *
               double{tb ? b[j * ldb + p] : b[p * ldb + j]};
      want[i * ldc + j] = static_cast<float>(sum);
    }
  detail::gemm(ta, tb, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, beta, c.data(), ldc, backend);
  for (std::size_t i = 0; i < s.m; ++i) {
    for (std::size_t j = 0; j < s.n; ++j)
      ASSERT_NEAR(c[i * ldc + j], want[i * ldc + j], 1e-5 * (1.0 + std::sqrt(double(s.k))))
          << s.m << "x" << s.n << "x" << s.k << " ta " << ta << " tb " << tb << " beta " << beta
          << " at " << i << "," << j;
    // The padding between rows is not written.
    for (std::size_t j = s.n; j < ldc && i + 1 < s.m; ++j)
      ASSERT_EQ(c[i * ldc + j], want[i * ldc + j]) << "padding " << i << "," << j;
  }
}

}  // namespace

TEST(Gemm, EveryFormAgainstTheScalarReference) {
  const Case cases[] = {{128, 128, 300}, {300, 128, 128}, {128, 300, 128}, {64, 128, 128},
                        {1, 128, 300},   {7, 5, 3},       {33, 17, 65},    {2, 1, 1}};
  for (GemmBackend backend : {GemmBackend::kAuto, GemmBackend::kEigen})
    for (const Case& s : cases)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (float beta : {0.0F, 1.0F}) check(s, ta, tb, beta, backend);
}

TEST(Gemm, EmptyDepthClearsOrKeeps) {
  std::vector<float> c(6, 2.0F);
  detail::gemm(false, false, 2, 3, 0, nullptr, 1, nullptr, 3, 1.0F, c.data(), 3);
  for (float v : c) EXPECT_EQ(v, 2.0F);
  detail::gemm(false, false, 2, 3, 0, nullptr, 1, nullptr, 3, 0.0F, c.data(), 3);
  for (float v : c) EXPECT_EQ(v, 0.0F);
}

TEST(Gemm, BackendIsNamed) {
  const std::string name = detail::gemm_backend_name();
  EXPECT_TRUE(name == "Eigen" || name.rfind("libxsmm (", 0) == 0) << name;
}

// The vectorised ELU against std::expm1 over the whole float range it sees:
// within 4 ulp of the result (or 1e-7 absolute near 0), exact for z > 0,
// -1 far below, NaN kept.
TEST(BatchKernels, EluAgainstExpm1) {
  std::vector<float> z;
  for (float x = -100.0F; x < 5.0F; x += 0.00137F) z.push_back(x);
  for (float x : {0.0F, -0.0F, -1e-30F, -1e-8F, -0.35F, -0.3500001F, -87.0F, -88.0F, -1e30F, 1e30F})
    z.push_back(x);
  std::vector<float> got = z;
  detail::elu_inplace(got.data(), got.size());
  for (std::size_t i = 0; i < z.size(); ++i) {
    const float want = z[i] > 0.0F ? z[i] : std::expm1(z[i]);
    const float tol = std::max(4.0F * std::abs(want) * 1.1920929e-7F, 1e-12F);
    ASSERT_NEAR(got[i], want, tol) << "z = " << z[i];
  }
  std::vector<float> nan{std::numeric_limits<float>::quiet_NaN()};
  detail::elu_inplace(nan.data(), 1);
  EXPECT_TRUE(std::isnan(nan[0]));
}

// dense_rows: every ISA's kernel gives the bits of a double-checked scalar
// chain of fused multiply-adds (bias first, k in order), for row counts
// around the 4-row blocks and output counts around the 16/32/64/128-output
// blocks and masks.
TEST(DenseRows, EveryIsaEqualsTheFmaChain) {
  Rng rng(17);
  for (std::size_t rows : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{9}})
    for (std::size_t in : {std::size_t{1}, std::size_t{7}, std::size_t{300}})
      for (std::size_t out : {std::size_t{1}, std::size_t{6}, std::size_t{16}, std::size_t{37},
                              std::size_t{64}, std::size_t{128}, std::size_t{131}}) {
        std::vector<float> x(rows * in), w(in * out), b(out);
        for (float& v : x) v = static_cast<float>(rng.uniform(-2.0, 2.0));
        for (float& v : w) v = static_cast<float>(rng.uniform(-1.0, 1.0));
        for (float& v : b) v = static_cast<float>(rng.uniform(-1.0, 1.0));
        std::vector<float> want(rows * out);
        for (std::size_t r = 0; r < rows; ++r)
          for (std::size_t o = 0; o < out; ++o) {
            float acc = b[o];
            for (std::size_t k = 0; k < in; ++k) acc = std::fma(x[r * in + k], w[k * out + o], acc);
            want[r * out + o] = acc;
          }
        for (detail::DenseIsa isa : {detail::DenseIsa::kAuto, detail::DenseIsa::kAvx512,
                                     detail::DenseIsa::kAvx2, detail::DenseIsa::kScalar}) {
          std::vector<float> got(rows * out + 5, 1234.0F);  // 5 guard floats past the end
          detail::dense_rows(x.data(), rows, in, w.data(), b.data(), out, got.data(), isa);
          EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
              << "isa " << static_cast<int>(isa) << ", " << rows << "x" << in << " -> " << out;
          for (std::size_t g = rows * out; g < got.size(); ++g) EXPECT_EQ(got[g], 1234.0F);
        }
      }
}

// adam_step on every ISA against Adam in double precision, over ten steps
// of gradients spanning ten orders of magnitude (and exact zeros, where v
// stays 0 and the update must be 0, not NaN), for lengths around the
// 16-lane blocks: the AVX-512 kernel's refined reciprocal estimates and the
// compiled loop's exact root and division both stay within a few float
// roundings of the exact step.
TEST(BatchKernels, AdamStepAgainstDouble) {
  Rng r(8);
  for (std::size_t n :
       {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17}, std::size_t{100}}) {
    for (detail::DenseIsa isa :
         {detail::DenseIsa::kAvx512, detail::DenseIsa::kAvx2, detail::DenseIsa::kScalar}) {
      std::vector<float> p(n), m(n, 0.0F), v(n, 0.0F), g(n);
      std::vector<double> pd(n), md(n, 0.0), vd(n, 0.0);
      for (std::size_t i = 0; i < n; ++i) pd[i] = p[i] = static_cast<float>(r.uniform(-1.0, 1.0));
      const double b1 = 0.9, b2 = 0.999, lr = 1e-3, eps = 1e-8;
      for (int t = 1; t <= 10; ++t) {
        for (std::size_t i = 0; i < n; ++i)
          g[i] = i % 7 == 3 ? 0.0F
                            : static_cast<float>(r.uniform(-1.0, 1.0) *
                                                 std::pow(10.0, -static_cast<double>(i % 11)));
        const double c1 = 1.0 - std::pow(b1, t), c2 = 1.0 - std::pow(b2, t);
        const detail::AdamStep c =
            detail::adam_step_constants(b1, b2, lr, eps, static_cast<std::uint64_t>(t));
        detail::adam_step(p.data(), g.data(), m.data(), v.data(), n, c, isa);
        for (std::size_t i = 0; i < n; ++i) {
          md[i] = b1 * md[i] + (1.0 - b1) * g[i];
          vd[i] = b2 * vd[i] + (1.0 - b2) * double{g[i]} * g[i];
          const double step = lr * (md[i] / c1) / (std::sqrt(vd[i] / c2) + eps);
          pd[i] -= step;
          // The float state rounds each step: a few ulp of p, and a
          // relative 1e-6 of the step (m, v and the constants in float).
          const double tol = 8.0 * 1.1920929e-7 * std::fabs(pd[i]) + 1e-6 * std::fabs(step);
          ASSERT_NEAR(p[i], pd[i], tol * t)
              << "n " << n << ", isa " << static_cast<int>(isa) << ", step " << t << ", i " << i;
          ASSERT_TRUE(std::isfinite(p[i]));
          if (g[i] == 0.0F && t == 1) {
            EXPECT_EQ(v[i], 0.0F);
          }
        }
      }
    }
  }
}

// transpose: every element lands in its place, for shapes around the 16×16
// register blocks, padded strides, on the AVX-512 blocks and element by
// element; nothing past a row's end in dst is written.
TEST(BatchKernels, TransposeEveryShape) {
  for (std::size_t rows : {1, 15, 16, 17, 33, 128})
    for (std::size_t cols : {1, 16, 31, 48, 128})
      for (detail::DenseIsa isa : {detail::DenseIsa::kAvx512, detail::DenseIsa::kScalar}) {
        const std::size_t lds = cols + 3, ldd = rows + 5;
        std::vector<float> src(rows * lds), dst(cols * ldd, -1.0F);
        for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
        detail::transpose(src.data(), rows, cols, lds, dst.data(), ldd, isa);
        for (std::size_t j = 0; j < cols; ++j)
          for (std::size_t i = 0; i < ldd; ++i)
            ASSERT_EQ(dst[j * ldd + i], i < rows ? src[i * lds + j] : -1.0F)
                << rows << "x" << cols << " isa " << static_cast<int>(isa) << " at " << j << ","
                << i;
      }
}

// The training buffers start on cache lines whatever their size (rows split
// between cores at multiples of 16 floats must not share a line), and the
// allocator's storage behaves as a vector's.
TEST(BatchKernels, AlignedFloatsStartOnCacheLines) {
  for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{17}, std::size_t{38400}}) {
    detail::AlignedFloats v(n, 1.5F);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0U) << n;
    v.push_back(2.0F);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 64, 0U) << n;
    EXPECT_EQ(v.size(), n + 1);
    EXPECT_EQ(v.front(), 1.5F);
    EXPECT_EQ(v.back(), 2.0F);
  }
}
