#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/ridge.h"

using namespace charkit::deformer;

TEST(Ridge, TinySystemSolvedByHand) {
  // X = [[1,0],[0,1],[1,1]], Y = [1,2,4]^T, lambda = 1.
  // X^T X + I = [[3,1],[1,3]], X^T Y = [1+4, 2+4] = [5, 6].
  // det = 8, inverse = [[3,-1],[-1,3]] / 8, W = [15-6, -5+18] / 8 = [9/8, 13/8].
  const std::vector<float> x = {1, 0, 0, 1, 1, 1};
  const std::vector<float> y = {1, 2, 4};
  RidgeOptions o;
  o.lambda = 1.0;
  auto m = fit_ridge(x, y, 3, 2, 1, o);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_EQ(m->weights().size(), 2U);
  EXPECT_NEAR(m->weights()[0], 1.125F, 1e-6);
  EXPECT_NEAR(m->weights()[1], 1.625F, 1e-6);
  // Two right-hand sides at once: the second is 2 * the first.
  const std::vector<float> y2 = {1, 2, 2, 4, 4, 8};
  auto m2 = fit_ridge(x, y2, 3, 2, 2, o);
  ASSERT_TRUE(m2.ok());
  EXPECT_NEAR(m2->weights()[0], 1.125F, 1e-6);  // row-major F x O: W[0][0]
  EXPECT_NEAR(m2->weights()[1], 2.25F, 1e-6);   // W[0][1]
  EXPECT_NEAR(m2->weights()[2], 1.625F, 1e-6);  // W[1][0]
  EXPECT_NEAR(m2->weights()[3], 3.25F, 1e-6);   // W[1][1]
}

TEST(Ridge, RestGivesExactlyZero) {
  Rng r(5);
  const std::size_t n = 40, f = 6, o = 9;
  std::vector<float> x(n * f), y(n * o);
  for (float& v : x) v = static_cast<float>(r.uniform(-1.0, 1.0));
  for (float& v : y) v = static_cast<float>(r.uniform(-0.1, 0.1));
  auto m = fit_ridge(x, y, n, f, o);
  ASSERT_TRUE(m.ok());
  std::vector<float> zero(f, 0.0F), out(o, 123.0F);
  ASSERT_TRUE(m->evaluate(zero, out));
  for (float v : out) EXPECT_EQ(v, 0.0F);
  // Features -> offsets is the matrix product.
  std::vector<float> feat = {1.0F, 0.0F, 0.0F, 0.0F, 0.0F, 2.0F};
  ASSERT_TRUE(m->evaluate(feat, out));
  for (std::size_t k = 0; k < o; ++k)
    EXPECT_FLOAT_EQ(out[k], m->weights()[k] + 2.0F * m->weights()[5 * o + k]);
  std::vector<float> wrong(f + 1);
  EXPECT_FALSE(m->evaluate(wrong, out));
}

TEST(Ridge, LambdaZeroRecoversAnExactLinearMap) {
  // W_true with dyadic entries; X small integers: Y = X W_true is exact in float.
  const std::size_t n = 7, f = 3, o = 4;
  const std::vector<float> w_true = {1.0F,   -2.0F, 0.5F,  0.25F,  //
                                     3.0F,   0.0F,  -1.5F, 4.0F,   //
                                     -0.75F, 2.0F,  1.0F,  -8.0F};
  const std::vector<float> x = {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 2, 3, -2, 1, 0, 3, -1, 2, 1, 1, 1};
  std::vector<float> y(n * o, 0.0F);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < o; ++k)
      for (std::size_t j = 0; j < f; ++j) y[i * o + k] += x[i * f + j] * w_true[j * o + k];
  RidgeOptions opt;
  opt.lambda = 0.0;
  opt.column_block = 3;  // several blocks, one partial
  auto m = fit_ridge(x, y, n, f, o, opt);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  for (std::size_t i = 0; i < w_true.size(); ++i)
    EXPECT_NEAR(m->weights()[i], w_true[i], 1e-5) << i;
  // A tiny lambda barely moves it; a large one shrinks the weights.
  opt.lambda = 1e-9;
  auto small = fit_ridge(x, y, n, f, o, opt);
  ASSERT_TRUE(small.ok());
  for (std::size_t i = 0; i < w_true.size(); ++i) EXPECT_NEAR(small->weights()[i], w_true[i], 1e-5);
  opt.lambda = 1e6;
  auto big = fit_ridge(x, y, n, f, o, opt);
  ASSERT_TRUE(big.ok());
  for (float w : big->weights()) EXPECT_LT(std::fabs(w), 1e-3);
}

TEST(Ridge, Errors) {
  const std::vector<float> x = {1, 0, 0, 1};
  const std::vector<float> y = {1, 2};
  EXPECT_EQ(fit_ridge(x, y, 2, 3, 1).error().code, "RIDGE_SHAPE");
  EXPECT_EQ(fit_ridge(x, y, 2, 2, 2).error().code, "RIDGE_SHAPE");
  EXPECT_EQ(fit_ridge(x, y, 0, 2, 1).error().code, "RIDGE_SHAPE");
  RidgeOptions neg;
  neg.lambda = -1.0;
  EXPECT_EQ(fit_ridge(x, y, 2, 2, 1, neg).error().code, "RIDGE_NOT_FINITE");
  const std::vector<float> xnan = {1, NAN, 0, 1};
  EXPECT_EQ(fit_ridge(xnan, y, 2, 2, 1).error().code, "RIDGE_NOT_FINITE");
  // Two identical feature columns and no regularisation: singular.
  const std::vector<float> dup = {1, 1, 2, 2, 3, 3};
  const std::vector<float> y3 = {1, 2, 3};
  RidgeOptions zero;
  zero.lambda = 0.0;
  auto s = fit_ridge(dup, y3, 3, 2, 1, zero);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "RIDGE_SINGULAR");
  // The same with lambda > 0 is fine and splits the weight evenly.
  RidgeOptions one;
  one.lambda = 1.0;
  auto ok = fit_ridge(dup, y3, 3, 2, 1, one);
  ASSERT_TRUE(ok.ok());
  EXPECT_NEAR(ok->weights()[0], ok->weights()[1], 1e-6);
  EXPECT_EQ(LinearModel::make(2, 3, std::vector<float>(5)).error().code, "RIDGE_SHAPE");
}
