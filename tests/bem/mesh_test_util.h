// Shared helpers of the rules_*_test.cpp files: validate a TestPackage and
// look for issue codes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

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

inline testkit::Json& mesh0(testkit::TestPackage& p) {
  return p.manifest["meshes"][0];
}
inline testkit::Json& attrs(testkit::TestPackage& p) {
  return p.manifest["meshes"][0]["attributes"];
}

/// The baseline with a 12-byte skin stream (§7): per vertex UNorm16×4
/// weights, then UInt8×4 bone indices.
inline testkit::TestPackage with_skin12(int minor, std::vector<std::uint16_t> w = {65535, 0, 0, 0},
                                        std::vector<std::uint8_t> idx = {0, 0, 0, 0}) {
  testkit::TestPackage p = testkit::make_valid_package(minor);
  mesh0(p)["streams"][2]["stride"] = 12;
  attrs(p)[2] = testkit::Json::array({12, 4, 4, 2, 0});
  attrs(p).push_back(testkit::Json::array({13, 6, 4, 2, 8}));
  testkit::ByteVec skin;
  for (int v = 0; v < 3; ++v) {
    testkit::ByteVec wb = testkit::u16_bytes(w);
    skin.insert(skin.end(), wb.begin(), wb.end());
    skin.insert(skin.end(), idx.begin(), idx.end());
  }
  p.payloads[2] = skin;
  return p;
}

/// The baseline with a 32-byte skin stream (§9, 1.2+): per vertex Float32×4
/// weights, then UInt32×4 bone indices.
inline testkit::TestPackage with_skin32(int minor, std::vector<float> w = {1, 0, 0, 0},
                                        std::vector<std::uint32_t> idx = {0, 0, 0, 0}) {
  testkit::TestPackage p = testkit::make_valid_package(minor);
  mesh0(p)["streams"][2]["stride"] = 32;
  attrs(p)[2] = testkit::Json::array({12, 0, 4, 2, 0});
  attrs(p).push_back(testkit::Json::array({13, 10, 4, 2, 16}));
  testkit::ByteVec skin;
  for (int v = 0; v < 3; ++v) {
    testkit::ByteVec a = testkit::f32_bytes(w), b = testkit::u32_bytes(idx);
    skin.insert(skin.end(), a.begin(), a.end());
    skin.insert(skin.end(), b.begin(), b.end());
  }
  p.payloads[2] = skin;
  return p;
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
