// Shared helpers of the rules_*_test.cpp files: validate a TestPackage and
// look for issue codes.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "charkit/bem/validate.h"
#include "package_builder.h"

namespace charkit::rules_test {

enum class Form { kBinary, kBinaryZstd, kZip };

inline bem::ValidationResult validate(const testkit::TestPackage& p, Form form = Form::kBinary,
                                      const bem::ValidateOptions& options = {}) {
  testkit::ByteVec bytes = form == Form::kZip          ? p.zip()
                           : form == Form::kBinaryZstd ? p.binary(true)
                                                       : p.binary();
  return bem::validate_package(bytes, options);
}

inline std::size_t count_code(const bem::ValidationResult& r, const std::string& code) {
  std::size_t n = 0;
  for (const auto& i : r.report.issues())
    if (i.code == code) ++n;
  return n;
}

}  // namespace charkit::rules_test

/// The package is invalid and reports `code`.
#define EXPECT_REJECTS(pkg, code)                                          \
  do {                                                                     \
    auto r_ = ::charkit::rules_test::validate(pkg);                        \
    EXPECT_TRUE(r_.report.has_code(code)) << "expected " << (code) << "\n" \
                                          << r_.report.to_text("pkg");     \
    EXPECT_FALSE(r_.valid());                                              \
  } while (0)

/// The package is valid (no errors).
#define EXPECT_ACCEPTS(pkg)                              \
  do {                                                   \
    auto r_ = ::charkit::rules_test::validate(pkg);      \
    EXPECT_TRUE(r_.valid()) << r_.report.to_text("pkg"); \
  } while (0)
