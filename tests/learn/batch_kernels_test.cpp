// detail::gemm, the learn module's one matrix product, and detail::elu_inplace against a scalar
// reference: every transpose form, strides wider than the matrices, beta 0
// and 1, the shapes of the MLP's training step and odd ones, on the backend
// this build picks (libxsmm where built with it) and on Eigen.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "charkit/learn/detail/batch_kernels.h"
#include "charkit/learn/detail/prng.h"

using namespace charkit::learn;
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
