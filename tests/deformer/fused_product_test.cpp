// detail::fused_product (the training step's products with their epilogues)
// against fused_product_reference, the scalar std::fma chain (and adam_step
// for the Adam epilogue), to the bit:
// both row layouts, every epilogue, with and without a bias, row counts
// around the 6/4/2/1-row blocks, column counts around the 64-column blocks
// and their masks, gathered and repeated row pointers, an offset into the
// rows and strides wider than the matrices, with and without the prefetches
// (and, for Adam, the column sums of b).
// The reference itself is checked against sums in double and std::expm1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "charkit/deformer/detail/batch_kernels.h"
#include "charkit/deformer/detail/prng.h"

using namespace charkit::deformer;
using detail::FusedEpilogue;
using detail::FusedProduct;
using detail::FusedRows;

namespace {

struct Inputs {
  std::vector<float> pool;        // the rows the pointers point into
  std::vector<const float*> ptr;  // one per row (kPerRow) or per k (kPerK)
  std::vector<float> b, bias, e;
  std::vector<float> targets;  // kResidual: a row per row of y, scrambled
  std::vector<const float*> tptr;
};

// A product of rows × depth → cols with padded strides; X's rows gathered
// from a pool in a scrambled order with repeats, read from `offset` on.
FusedProduct make(Inputs& in, FusedRows layout, FusedEpilogue epi, bool with_bias, std::size_t rows,
                  std::size_t depth, std::size_t cols, Rng& rng) {
  const std::size_t offset = 3;
  const std::size_t pointers = layout == FusedRows::kPerRow ? rows : depth;
  const std::size_t width = (layout == FusedRows::kPerRow ? depth : rows) + offset + 2;
  const std::size_t pool_rows = pointers / 2 + 3;
  in.pool.resize(pool_rows * width);
  for (float& v : in.pool) v = static_cast<float>(rng.uniform(-2.0, 2.0));
  in.ptr.resize(pointers);
  for (std::size_t i = 0; i < pointers; ++i)
    in.ptr[i] = in.pool.data() + ((i * 7 + 2) % pool_rows) * width;
  const std::size_t ldb = cols + 5, lde = cols + 1;
  in.b.resize(depth * ldb);
  for (float& v : in.b) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  in.bias.resize(cols);
  for (float& v : in.bias) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  in.e.resize(rows * lde);
  // ELU outputs: > -1, some exactly at or above 0.
  for (float& v : in.e) v = static_cast<float>(rng.uniform(-0.999, 1.0));
  in.targets.resize((rows + 1) * cols);
  for (float& v : in.targets) v = static_cast<float>(rng.uniform(-3.0, 3.0));
  in.tptr.resize(rows);
  for (std::size_t r = 0; r < rows; ++r)
    in.tptr[r] = in.targets.data() + ((r * 5) % (rows + 1)) * cols;
  FusedProduct p;
  p.x = in.ptr.data();
  p.layout = layout;
  p.offset = offset;
  p.rows = rows, p.depth = depth, p.cols = cols;
  p.b = in.b.data(), p.ldb = ldb;
  p.bias = with_bias ? in.bias.data() : nullptr;
  p.epilogue = epi;
  p.e = in.e.data(), p.lde = lde;
  p.ldy = cols + 3;
  p.t = in.tptr.data();
  p.scale = 0.375F;
  return p;
}

}  // namespace

TEST(FusedProduct, EveryFormEqualsTheReference) {
  if (!detail::fused_product_available()) GTEST_SKIP() << "no AVX-512 kernel on this CPU";
  Rng rng(5);
  for (FusedRows layout : {FusedRows::kPerRow, FusedRows::kPerK})
    for (FusedEpilogue epi : {FusedEpilogue::kStore, FusedEpilogue::kElu, FusedEpilogue::kEluGrad,
                              FusedEpilogue::kAdam, FusedEpilogue::kResidual})
      for (std::size_t rows : {1, 2, 3, 5, 6, 7, 8, 13, 14, 20})
        for (std::size_t depth : {1, 9, 70})
          for (std::size_t cols : {1, 16, 37, 64, 100, 128, 131}) {
            Inputs in;
            FusedProduct p = make(in, layout, epi, rows % 2 == 1, rows, depth, cols, rng);
            p.prefetch = (rows + depth) % 2 == 0;  // changes no bit
            const std::size_t cells = rows * p.ldy;
            // kAdam: y holds the parameters (updated in place), m and v the
            // moments (v >= 0, some exactly 0) laid out like y.
            std::vector<float> want(cells + 4), got, m0(cells + 4), v0(cells + 4);
            for (std::size_t i = 0; i < want.size(); ++i) {
              want[i] = static_cast<float>(rng.uniform(-1.0, 1.0));
              m0[i] = static_cast<float>(rng.uniform(-0.1, 0.1));
              v0[i] = i % 5 == 0 ? 0.0F : static_cast<float>(rng.uniform(0.0, 0.01));
            }
            got = want;
            std::vector<float> m1 = m0, v1 = v0;
            const detail::AdamStep adam = detail::adam_step_constants(0.9, 0.999, 0.01, 1e-8, 3);
            p.adam = &adam;
            std::vector<float> lanes0(rows * 16, 5.0F), lanes1(rows * 16, 6.0F);
            // kAdam: the column sums of b (the bias gradient) in about half
            // the cases; one float past the columns must stay untouched.
            const bool sums = epi == FusedEpilogue::kAdam && (rows + cols) % 2 == 1;
            std::vector<float> sums0(cols + 1, 9.0F), sums1(cols + 1, 7.0F);
            p.y = want.data(), p.m = m0.data(), p.v = v0.data(), p.lanes = lanes0.data();
            p.column_sums = sums ? sums0.data() : nullptr;
            detail::fused_product_reference(p);
            p.y = got.data(), p.m = m1.data(), p.v = v1.data(), p.lanes = lanes1.data();
            p.column_sums = sums ? sums1.data() : nullptr;
            ASSERT_TRUE(detail::fused_product(p));
            ASSERT_EQ(m0, m1);
            ASSERT_EQ(v0, v1);
            if (sums) {
              EXPECT_EQ(sums1[cols], 7.0F);
              sums1[cols] = 9.0F;
              ASSERT_EQ(0, std::memcmp(sums0.data(), sums1.data(), sums0.size() * sizeof(float)));
              for (std::size_t o = 0; o < cols; ++o) {  // the reference: k in order
                float s = 0.0F;
                for (std::size_t k = 0; k < depth; ++k) s += p.b[k * p.ldb + o];
                ASSERT_EQ(s, sums0[o]);
              }
            }
            if (epi == FusedEpilogue::kResidual) {
              ASSERT_EQ(lanes0, lanes1);
            }
            ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)))
                << "layout " << static_cast<int>(layout) << ", epilogue " << static_cast<int>(epi)
                << ", " << rows << "x" << depth << " -> " << cols;
          }
}

// The reference: the sums within float rounding of double sums, the ELU of
// them within 4 ulp of std::expm1 (exact above 0), the derivative's factor
// min(e + 1, 1), the residual and its squares by lane; stores only inside
// the rows' columns.
TEST(FusedProduct, ReferenceAgainstDouble) {
  Rng rng(9);
  for (FusedRows layout : {FusedRows::kPerRow, FusedRows::kPerK})
    for (FusedEpilogue epi : {FusedEpilogue::kStore, FusedEpilogue::kElu, FusedEpilogue::kEluGrad,
                              FusedEpilogue::kResidual}) {
      Inputs in;
      const std::size_t rows = 7, depth = 33, cols = 19;
      FusedProduct p = make(in, layout, epi, true, rows, depth, cols, rng);
      std::vector<float> y(rows * p.ldy, 77.0F), lanes(rows * 16);
      p.y = y.data();
      p.lanes = lanes.data();
      detail::fused_product_reference(p);
      for (std::size_t r = 0; r < rows; ++r) {
        std::vector<double> sq(16, 0.0);
        for (std::size_t o = 0; o < cols; ++o) {
          double sum = p.bias[o];
          for (std::size_t k = 0; k < depth; ++k) {
            const float xv =
                layout == FusedRows::kPerRow ? p.x[r][p.offset + k] : p.x[k][p.offset + r];
            sum += static_cast<double>(xv) * p.b[k * p.ldb + o];
          }
          double want = sum;
          if (epi == FusedEpilogue::kElu) want = sum > 0.0 ? sum : std::expm1(sum);
          if (epi == FusedEpilogue::kEluGrad) want = sum * std::min(p.e[r * p.lde + o] + 1.0, 1.0);
          if (epi == FusedEpilogue::kResidual) {
            const double d = sum - p.t[r][o];
            want = d * p.scale;
            sq[o % 16] += d * d;
          }
          const double tol = 1e-5 * (1.0 + std::abs(want));
          EXPECT_NEAR(y[r * p.ldy + o], want, tol) << r << "," << o;
        }
        for (std::size_t o = cols; o < p.ldy; ++o) EXPECT_EQ(y[r * p.ldy + o], 77.0F);
        if (epi == FusedEpilogue::kResidual) {
          for (std::size_t j = 0; j < 16; ++j) {
            EXPECT_NEAR(lanes[r * 16 + j], sq[j], 1e-5 * (1.0 + sq[j])) << r << ", lane " << j;
          }
        }
      }
    }
}

// The ELU epilogue at the edges: exact above 0, -1 far below, within 4 ulp
// of std::expm1 between, infinities and NaN as ELU maps them; the vector
// kernel and the reference agree on every one.
TEST(FusedProduct, EluEdges) {
  std::vector<float> z{0.0F,
                       -0.0F,
                       1e-30F,
                       -1e-30F,
                       -1e-8F,
                       -0.34F,
                       -0.35F,
                       -1.0F,
                       -10.0F,
                       -86.9F,
                       -87.0F,
                       -88.0F,
                       -1e30F,
                       1e30F,
                       3.5F,
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(),
                       std::numeric_limits<float>::quiet_NaN()};
  for (float x = -20.0F; x < 1.0F; x += 0.0371F) z.push_back(x);
  // y = 1 · z: one row of depth 1 over the values as columns.
  const std::vector<float> one{1.0F};
  const float* row = one.data();
  FusedProduct p;
  p.x = &row;
  p.rows = 1, p.depth = 1, p.cols = z.size();
  p.b = z.data(), p.ldb = z.size();
  p.epilogue = FusedEpilogue::kElu;
  p.ldy = z.size();
  std::vector<float> ref(z.size()), vec(z.size());
  p.y = ref.data();
  detail::fused_product_reference(p);
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (std::isnan(z[i])) {
      EXPECT_TRUE(std::isnan(ref[i]));
      continue;
    }
    const float want = z[i] > 0.0F ? z[i] : std::expm1(z[i]);
    if (std::isinf(want)) {
      EXPECT_EQ(ref[i], want);
      continue;
    }
    const float tol = std::max(4.0F * std::abs(want) * 1.1920929e-7F, 1e-12F);
    EXPECT_NEAR(ref[i], want, tol) << "z = " << z[i];
  }
  p.y = vec.data();
  if (!detail::fused_product(p)) GTEST_SKIP() << "no AVX-512 kernel on this CPU";
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (std::isnan(z[i]))
      EXPECT_TRUE(std::isnan(vec[i]));
    else
      EXPECT_EQ(vec[i], ref[i]) << "z = " << z[i];
  }
}

// Rows computed in two calls (the split between a step's pieces) give the
// bits of one call: no sum depends on which block a row falls in.
TEST(FusedProduct, SplitRowsGiveTheSameBits) {
  if (!detail::fused_product_available()) GTEST_SKIP() << "no AVX-512 kernel on this CPU";
  Rng rng(11);
  for (FusedRows layout : {FusedRows::kPerRow, FusedRows::kPerK}) {
    Inputs in;
    const std::size_t rows = 128, depth = 40, cols = 128;
    FusedProduct p = make(in, layout, FusedEpilogue::kElu, true, rows, depth, cols, rng);
    std::vector<float> whole(rows * p.ldy), parts(rows * p.ldy);
    p.y = whole.data();
    ASSERT_TRUE(detail::fused_product(p));
    for (std::size_t split : {1, 5, 61, 64, 127}) {
      FusedProduct a = p, b = p;
      a.y = parts.data(), a.rows = split;
      b.rows = rows - split, b.y = parts.data() + split * p.ldy;
      b.e = p.e + split * p.lde;
      if (layout == FusedRows::kPerRow)
        b.x = p.x + split;
      else
        b.offset = p.offset + split;
      ASSERT_TRUE(detail::fused_product(a));
      ASSERT_TRUE(detail::fused_product(b));
      EXPECT_EQ(whole, parts) << "layout " << static_cast<int>(layout) << ", split " << split;
    }
  }
}
