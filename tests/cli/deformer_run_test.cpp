// `charkit deformer info|run` on a `.nmn` built by hand from the layout in
// docs/deformer/nmn.md and `.npy` arrays built by hand from NumPy's format
// (magic, version 1.0, uint16 header length, Python-literal dict padded with
// spaces to a multiple of 64 bytes and ending in '\n', then the data).
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

class Bytes {
 public:
  Bytes& at(std::size_t off) {
    b_.resize(off, 0);
    return *this;
  }
  Bytes& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  Bytes& f32(std::initializer_list<float> vs) {
    for (float f : vs) u32(std::bit_cast<std::uint32_t>(f));
    return *this;
  }
  Bytes& str(const std::string& s) {
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  std::vector<std::uint8_t> b_;
};

// Global network over 3 curves: mean (1,0,0), std (2,1,1),
// Sequence[Linear 3->2, ReLU, Linear 2->2] (the library test's network).
std::vector<std::uint8_t> nmn_file() {
  Bytes h;
  h.u32(0x234A1304).u32(1).u32(1).u32(2).u32(0).u32(0).u32(3).u32(0).u32(0).u32(1);
  h.at(64).f32({1, 0, 0});
  h.at(128).f32({2, 1, 1});
  h.at(140).u32(4).str(std::string("net\0", 4));
  h.at(148).u32(272);
  h.at(192).u32(0x0BA51C01).u32(1).u32(1).u32(3).u32(4).u32(3).u32(2);
  h.at(256).f32({0.5f, -1});
  h.at(320).f32({1, -1, 2, 0, 0, 1});
  h.at(344).u32(7).u32(2).u32(4).u32(2).u32(2);
  h.at(384).f32({0, 1});
  h.at(448).f32({1, 2, -1, 0.5f});
  return h.b_;
}

std::vector<std::uint8_t> npy(std::size_t rows, std::size_t cols, const std::vector<float>& v,
                              const char* descr = "<f4") {
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  Bytes b;
  b.str("\x93NUMPY").str(std::string("\x01\x00", 2));
  b.b_.push_back(static_cast<std::uint8_t>(dict.size()));
  b.b_.push_back(static_cast<std::uint8_t>(dict.size() >> 8));
  b.str(dict);
  for (float f : v) b.f32({f});
  return b.b_;
}

// The float32 data of a 2-D .npy and its shape text.
std::vector<float> read_npy_floats(const std::filesystem::path& p, std::string& header) {
  std::ifstream in(p, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out;
  if (s.size() < 10 || s.compare(0, 6, "\x93NUMPY") != 0) return out;
  std::size_t len = static_cast<unsigned char>(s[8]) |
                    (static_cast<std::size_t>(static_cast<unsigned char>(s[9])) << 8);
  header = s.substr(10, len);
  for (std::size_t i = 10 + len; i + 4 <= s.size(); i += 4) {
    std::uint32_t u;
    std::memcpy(&u, s.data() + i, 4);
    out.push_back(std::bit_cast<float>(u));
  }
  return out;
}

// Local network: 2 bones, 1 morph per bone, 1 group of 2 items; main
// Sequence[MultiLinear 2 x (6 -> 1), ELU 2], group MultiLinear 1 x (12 -> 1).
std::vector<std::uint8_t> local_nmn_file() {
  Bytes h;
  h.u32(0x234A1304).u32(1).u32(0).u32(0).u32(1).u32(2).u32(0).u32(1).u32(2).u32(6);
  h.at(64).f32({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  h.at(128).f32({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  h.at(176).u32(1).str(std::string(1, '\0'));
  h.at(184).u32(184);
  h.at(192).u32(0x0BA51C01).u32(1).u32(1).u32(2).u32(6).u32(2).u32(6).u32(1);
  h.at(256).f32({0, -1});
  h.at(320).f32({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  h.at(368).u32(8).u32(2).u32(176);
  h.at(384).u32(0x0BA51C01).u32(1).u32(6).u32(1).u32(12).u32(1);
  h.at(448).f32({0});
  h.at(512).f32({0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1, 0, 0, 0, 0, 0});
  return h.b_;
}

class DeformerRun : public ScratchDir {};

TEST_F(DeformerRun, LocalModeWithGroupsFromSidecar) {
  auto model = write("local.nmn", local_nmn_file());
  auto in = write("in.npy", npy(1, 12, {-1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2}));
  auto out = dir_ / "out.npy";
  std::string cmd = "deformer run " + quote(model) + " --input " + quote(in) + " -o " + quote(out);
  // Without the group membership the group model cannot run.
  auto r = run_charkit(cmd, true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("NMN_GROUP_ITEMS"), std::string::npos) << r.out;
  std::string side =
      R"({"format":"charkit.bmd_ue","version":1,"mode":"local","bones":["a","b"],"curves":[],"morphTargets":[],"groups":[[1,0]]})";
  auto sc = write("groups.json", std::vector<std::uint8_t>(side.begin(), side.end()));
  r = run_charkit(cmd + " --sidecar " + quote(sc));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::string header;
  auto v = read_npy_floats(out, header);
  EXPECT_NE(header.find("(1, 3)"), std::string::npos) << header;
  ASSERT_EQ(v.size(), 3u);
  // ELU(-1) = e^-1 - 1; ELU(2*2 - 1) = 3; group: 0.5*(1+2) + (-1) = 0.5.
  EXPECT_NEAR(v[0], -0.6321205588f, 1e-6);
  EXPECT_FLOAT_EQ(v[1], 3.0f);
  EXPECT_FLOAT_EQ(v[2], 0.5f);
  r = run_charkit("deformer info " + quote(model) + " --sidecar " + quote(sc));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("local mode"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MultiLinear 2 blocks x (6 -> 1) = 12 -> 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("group model:"), std::string::npos) << r.out;
}

TEST_F(DeformerRun, InfoText) {
  auto model = write("net.nmn", nmn_file());
  auto r = run_charkit("deformer info " + quote(model));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("global mode"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("inputs: 3 (0 bones x 6 + 3 curves x 1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Linear 3 -> 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ReLU 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("464 bytes"), std::string::npos) << r.out;
}

TEST_F(DeformerRun, InfoJson) {
  auto model = write("net.nmn", nmn_file());
  auto r = run_charkit("deformer info --json " + quote(model));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "nmn");
  EXPECT_EQ(j["mode"], "global");
  EXPECT_EQ(j["inputs"], 3);
  EXPECT_EQ(j["outputs"], 2);
  EXPECT_EQ(j["fileSize"], 464);
  EXPECT_EQ(j["runtimeName"], "net");
  // Linear 3x2+2, Linear 2x2+2, mean and std 3 each.
  EXPECT_EQ(j["parameters"], 8 + 6 + 6);
  ASSERT_EQ(j["mainModel"]["layers"].size(), 3u);
  EXPECT_EQ(j["mainModel"]["layers"][0]["type"], "Linear");
  EXPECT_EQ(j["mainModel"]["layers"][1]["type"], "ReLU");
  EXPECT_TRUE(j["sidecar"].is_null());
}

TEST_F(DeformerRun, RunBatchHandComputed) {
  auto model = write("net.nmn", nmn_file());
  auto in = write("in.npy", npy(3, 3, {3, 1, -2, 1, 0, 1, -1, 0, 0}));
  auto out = dir_ / "out.npy";
  auto r = run_charkit(
      "deformer run " + quote(model) + " --input " + quote(in) + " -o " + quote(out), true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("OUTPUT_NOT_FINITE"), std::string::npos) << r.out;
  std::string header;
  auto v = read_npy_floats(out, header);
  EXPECT_NE(header.find("'<f4'"), std::string::npos) << header;
  EXPECT_NE(header.find("(3, 2)"), std::string::npos) << header;
  // See tests/deformer/nmn_test.cpp NmnRun.GlobalHandComputed for the arithmetic.
  ASSERT_EQ(v.size(), 6u);
  std::vector<float> want{3.5f, 8, 0.5f, 2, 0, 1};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(v[i], want[i]) << i;

  r = run_charkit("deformer run " + quote(model) + " --input " + quote(in) + " -o " + quote(out) +
                  " --clamp");
  ASSERT_EQ(r.exit_code, 0);
  v = read_npy_floats(out, header);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v, (std::vector<float>{1, 1, 0.5f, 1, 0, 1}));

  // A second row whose feature overflows the first layer (0.5 + 2·3e38):
  // both of its outputs are infinite (ReLU would turn a NaN into 0), written
  // as they are and counted in a warning.
  auto big_in = write("big.npy", npy(3, 3, {3, 1, -2, 1, 3e38F, 0, -1, 0, 0}));
  r = run_charkit(
      "deformer run " + quote(model) + " --input " + quote(big_in) + " -o " + quote(out), true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("warning OUTPUT_NOT_FINITE: 2 of 6 outputs are NaN or infinite"),
            std::string::npos)
      << r.out;
  v = read_npy_floats(out, header);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_TRUE(std::isinf(v[2]) && std::isinf(v[3]));
  EXPECT_FLOAT_EQ(v[0], 3.5f);
}

TEST_F(DeformerRun, SidecarIsReadAndChecked) {
  auto model = write("net.nmn", nmn_file());
  std::string good =
      R"({"format":"charkit.bmd_ue","version":1,"mode":"global","bones":[],"curves":["a","b","c"],"morphTargets":["m1","m2"]})";
  write("net.bmd_ue.json", std::vector<std::uint8_t>(good.begin(), good.end()));
  auto r = run_charkit("deformer info " + quote(model));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("3 curves, 2 morph targets"), std::string::npos) << r.out;

  std::string bad =
      R"({"format":"charkit.bmd_ue","version":1,"mode":"global","bones":["spine"],"curves":["a","b","c"],"morphTargets":[]})";
  write("net.bmd_ue.json", std::vector<std::uint8_t>(bad.begin(), bad.end()));
  r = run_charkit("deformer info " + quote(model), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("SIDECAR_MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("9 inputs"), std::string::npos) << r.out;
}

TEST_F(DeformerRun, Errors) {
  auto model = write("net.nmn", nmn_file());
  auto out = dir_ / "out.npy";
  // Wrong column count.
  auto in = write("in.npy", npy(1, 4, {1, 2, 3, 4}));
  auto r = run_charkit(
      "deformer run " + quote(model) + " --input " + quote(in) + " -o " + quote(out), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("INPUT_SHAPE"), std::string::npos) << r.out;
  // Unknown layer id: error names the id and the byte offset.
  auto bytes = nmn_file();
  bytes[200] = 11;
  auto bad = write("bad.nmn", bytes);
  r = run_charkit("deformer info " + quote(bad), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(bad.string() + ": byte 200: error NMN_LAYER_UNSUPPORTED: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("11"), std::string::npos) << r.out;
  // Not a model.
  auto junk = write("junk.bin", {1, 2, 3, 4, 5});
  r = run_charkit("deformer info " + quote(junk), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("MODEL_KIND"), std::string::npos) << r.out;
  // Missing file: I/O error.
  r = run_charkit("deformer info " + quote(dir_ / "missing.nmn"));
  EXPECT_EQ(r.exit_code, 2);
  // Missing required option: usage error.
  r = run_charkit("deformer run " + quote(model));
  EXPECT_EQ(r.exit_code, 2);
  // Help teaches.
  r = run_charkit("deformer run --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("un-normalised"), std::string::npos);
}

}  // namespace
}  // namespace charkit::clitest
