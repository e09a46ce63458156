#include <gtest/gtest.h>

#include "charkit/bem/validate.h"
#include "package_builder.h"

using namespace charkit;

// Every minor version's baseline package, in every container form, is valid.
class ValidBaseline : public ::testing::TestWithParam<int> {};

TEST_P(ValidBaseline, BinaryRaw) {
  auto bytes = testkit::make_valid_package(GetParam()).binary();
  auto r = bem::validate_package(bytes);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
}
TEST_P(ValidBaseline, BinaryZstd) {
  auto bytes = testkit::make_valid_package(GetParam()).binary(true);
  auto r = bem::validate_package(bytes);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
}
TEST_P(ValidBaseline, ZipStoredAndDeflate) {
  for (bool deflate : {false, true}) {
    auto bytes = testkit::make_valid_package(GetParam()).zip(deflate);
    auto r = bem::validate_package(bytes);
    EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  }
}
INSTANTIATE_TEST_SUITE_P(AllMinors, ValidBaseline, ::testing::Range(0, 6));

TEST(ValidBaseline, ExplicitTargets14) {
  auto p = testkit::make_valid_package_v14();
  for (const auto& bytes : {p.binary(), p.zip()}) {
    auto r = bem::validate_package(bytes);
    EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  }
}
