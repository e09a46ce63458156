// `charkit deformer info|run` on ONNX conformance models (tests/data/onnx/,
// upstream's expected outputs). The TensorProto files are decoded here by a
// small reader written from the protobuf wire format (not the library's), so
// the CLI is checked against data it did not produce.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

namespace fs = std::filesystem;

// TensorProto: dims = field 1 (varint, maybe packed), data_type = 2,
// float_data = 4 (packed fixed32), raw_data = 9 (bytes).
struct Tensor {
  std::vector<std::uint64_t> dims;
  std::vector<float> values;
};

bool varint(const std::string& s, std::size_t& p, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; p < s.size() && shift < 64; shift += 7) {
    auto b = static_cast<std::uint8_t>(s[p++]);
    v |= std::uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

Tensor decode_tensor(const std::string& s) {
  Tensor t;
  std::size_t p = 0;
  auto floats = [&](std::size_t at, std::size_t len) {
    for (std::size_t k = 0; k + 4 <= len; k += 4) {
      std::uint32_t u;
      std::memcpy(&u, s.data() + at + k, 4);
      t.values.push_back(std::bit_cast<float>(u));
    }
  };
  while (p < s.size()) {
    std::uint64_t key = 0, v = 0;
    if (!varint(s, p, key)) break;
    const auto field = key >> 3, wire = key & 7;
    if (wire == 0) {
      varint(s, p, v);
      if (field == 1) t.dims.push_back(v);
    } else if (wire == 2) {
      varint(s, p, v);
      const std::size_t at = p;
      p += v;
      if (field == 1) {
        for (std::size_t q = at; q < p;) {
          std::uint64_t d;
          varint(s, q, d);
          t.dims.push_back(d);
        }
      } else if (field == 4 || field == 9) {
        floats(at, v);
      }
    } else if (wire == 5) {
      if (field == 4) floats(p, 4);
      p += 4;
    } else if (wire == 1) {
      p += 8;
    } else {
      break;
    }
  }
  return t;
}

std::vector<std::uint8_t> npy2d(std::size_t rows, std::size_t cols, const std::vector<float>& v) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) +
                     ", " + std::to_string(cols) + "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string b = "\x93NUMPY";
  b += std::string("\x01\x00", 2);
  b += static_cast<char>(dict.size() & 0xff);
  b += static_cast<char>(dict.size() >> 8);
  b += dict;
  std::vector<std::uint8_t> out(b.begin(), b.end());
  for (float f : v) {
    auto u = std::bit_cast<std::uint32_t>(f);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
  }
  return out;
}

const fs::path kLinear = fs::path(CHARKIT_TEST_DATA) / "onnx/pytorch-converted/test_Linear";

class DeformerOnnx : public ScratchDir {};

TEST_F(DeformerOnnx, RunLinearMatchesReference) {
  // PyTorch Linear(10 -> 8) exported at opset 6: Gemm with transB and a
  // broadcast bias; input [4, 10].
  Tensor in = decode_tensor(read_text(kLinear / "test_data_set_0/input_0.pb"));
  Tensor want = decode_tensor(read_text(kLinear / "test_data_set_0/output_0.pb"));
  ASSERT_EQ(in.dims, (std::vector<std::uint64_t>{4, 10}));
  ASSERT_EQ(in.values.size(), 40u);
  ASSERT_EQ(want.dims, (std::vector<std::uint64_t>{4, 8}));
  auto model = write("linear.onnx", [] {
    std::string m = read_text(kLinear / "model.onnx");
    return std::vector<std::uint8_t>(m.begin(), m.end());
  }());
  auto npy = write("in.npy", npy2d(4, 10, in.values));
  auto out = dir_ / "out.npy";
  auto r = run_charkit("deformer run " + quote(model) + " --input " + quote(npy) + " -o " +
                       quote(out) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "onnx");
  EXPECT_EQ(j["rows"], 4);
  EXPECT_EQ(j["outputs"], 8);
  std::string s = read_text(out);
  ASSERT_GT(s.size(), 10u);
  std::size_t len = static_cast<unsigned char>(s[8]) | (static_cast<unsigned char>(s[9]) << 8);
  EXPECT_NE(s.find("(4, 8)"), std::string::npos) << s.substr(0, 10 + len);
  ASSERT_EQ(s.size(), 10 + len + 32 * 4);
  for (std::size_t k = 0; k < 32; ++k) {
    float g;
    std::memcpy(&g, s.data() + 10 + len + 4 * k, 4);
    EXPECT_NEAR(g, want.values[k], 1e-6 + 1e-5 * std::abs(want.values[k])) << k;
  }
}

TEST_F(DeformerOnnx, DetectedByExtensionToo) {
  // Content detection does not depend on the name; an .onnx file without a
  // known leading tag still goes to the ONNX loader, which reports the error.
  auto junk = write("junk.onnx", std::vector<std::uint8_t>{0xff, 0xff, 0xff, 0xff});
  auto r = run_charkit("deformer info " + quote(junk), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("ONNX_PARSE"), std::string::npos) << r.out;
  auto other = write("junk.bin", std::vector<std::uint8_t>{0xff, 0xff, 0xff, 0xff});
  r = run_charkit("deformer info " + quote(other), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("MODEL_KIND"), std::string::npos) << r.out;
  // A BEM package's first byte is a ModelProto tag (0x42), but it is no model.
  r = run_charkit("deformer info " + quote(std::filesystem::path(CHARKIT_TEST_DATA) / "examples" /
                                           "example-1.5.bem"),
                  true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("MODEL_KIND"), std::string::npos) << r.out;
}

TEST_F(DeformerOnnx, Info) {
  std::string m = read_text(kLinear / "model.onnx");
  auto model = write("model.bin", std::vector<std::uint8_t>(m.begin(), m.end()));
  auto r = run_charkit("deformer info " + quote(model));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ONNX model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Gemm 1"), std::string::npos) << r.out;
  // Weights 8 x 10 and bias 8.
  EXPECT_NE(r.out.find("parameters: 88"), std::string::npos) << r.out;
  r = run_charkit("deformer info --json " + quote(model));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "onnx");
  EXPECT_EQ(j["opset"], 6);
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::parse("[4, 10]"));
  EXPECT_EQ(j["ops"]["Gemm"], 1);
}

}  // namespace
}  // namespace charkit::clitest
