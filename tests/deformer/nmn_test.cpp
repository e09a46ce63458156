// `.nmn` reading, writing and execution against bytes built by hand from the
// layout in shared/reference/ue-nmn-notes.md (docs/deformer/nmn.md). Every
// offset below is written out from the layout rules, not taken from our
// writer: 10 uint32 header values, arrays at 64-byte boundaries from the file
// start, the name length counting the NUL, model blobs at 64-byte boundaries,
// arrays inside a blob at 64-byte boundaries from the blob start.
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "charkit/deformer/nmn.h"
#include "charkit/deformer/nmn_sidecar.h"

namespace charkit::deformer {
namespace {

NmnLayer make_layer(NmnLayerType type, std::uint32_t in, std::uint32_t out) {
  NmnLayer l;
  l.type = type;
  l.in = in;
  l.out = out;
  return l;
}

// Writes values at explicit byte offsets; the gaps are zero padding.
class Hand {
 public:
  Hand& at(std::size_t off) {
    EXPECT_LE(b_.size(), off) << "layout overlap at " << off;
    b_.resize(off, 0);
    return *this;
  }
  Hand& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    return *this;
  }
  Hand& u16(std::uint16_t v) {
    b_.push_back(static_cast<std::uint8_t>(v));
    b_.push_back(static_cast<std::uint8_t>(v >> 8));
    return *this;
  }
  Hand& f32(std::initializer_list<float> vs) {
    for (float f : vs) u32(std::bit_cast<std::uint32_t>(f));
    return *this;
  }
  Hand& str(const std::string& s) {
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  Hand& byte(std::uint8_t v) {
    b_.push_back(v);
    return *this;
  }
  std::size_t size() const { return b_.size(); }
  const std::vector<std::uint8_t>& bytes() const { return b_; }

 private:
  std::vector<std::uint8_t> b_;
};

// Global network: 3 curve inputs, mean (1,0,0), std (2,1,1), runtime name
// "net", main model Sequence[Linear 3->2, ReLU 2, Linear 2->2].
std::vector<std::uint8_t> global_file() {
  Hand h;
  h.u32(0x234A1304).u32(1);             // magic, version
  h.u32(1)                              // mode global
      .u32(2)                           // NumMorphs
      .u32(0)                           // NumMorphsPerBone
      .u32(0)                           // NumBones
      .u32(3)                           // NumCurves
      .u32(0)                           // NumGroups
      .u32(0)                           // NumItemsPerGroup
      .u32(1);                          // NumFloatsPerCurve
  h.at(64).f32({1, 0, 0});              // mean (0 + 3) floats, 64-aligned
  h.at(128).f32({2, 1, 1});             // std, next 64-byte boundary after 76
  h.at(140).u32(4).str("net").byte(0);  // name length counts the NUL
  h.at(148).u32(272);                   // main model size
  const std::size_t m = 192;            // blob start: 152 rounded up to 64
  h.at(m).u32(0x0BA51C01).u32(1);
  h.u32(1).u32(3);                         // Sequence of 3
  h.u32(4).u32(3).u32(2);                  // Linear in 3 out 2
  h.at(m + 64).f32({0.5f, -1});            // biases[2]
  h.at(m + 128).f32({1, -1, 2, 0, 0, 1});  // weights[3][2]
  h.at(m + 152).u32(7).u32(2);             // ReLU 2
  h.u32(4).u32(2).u32(2);                  // Linear in 2 out 2
  h.at(m + 192).f32({0, 1});               // biases
  h.at(m + 256).f32({1, 2, -1, 0.5f});     // weights[2][2]
  EXPECT_EQ(h.size(), m + 272);
  return h.bytes();
}

// Local network: 2 bones, no curves, 1 morph per bone, 1 group of 2 items.
// Main: Sequence[MultiLinear(2 blocks, 6 rows, 1 col), ELU 2].
// Group: MultiLinear(1 block, 12 rows, 1 col) as the root.
std::vector<std::uint8_t> local_file() {
  Hand h;
  h.u32(0x234A1304).u32(1);
  h.u32(0).u32(0).u32(1).u32(2).u32(0).u32(1).u32(2).u32(6);
  h.at(64).f32({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});   // mean[12]
  h.at(128).f32({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});  // std[12]
  h.at(176).u32(1).byte(0);                             // empty name: just the NUL
  h.at(184).u32(184);                                   // main size (4-aligned after the name)
  std::size_t m = 192;
  h.at(m).u32(0x0BA51C01).u32(1).u32(1).u32(2);
  h.u32(6).u32(2).u32(6).u32(1);  // MultiLinear blocks 2 rows 6 cols 1
  h.at(m + 64).f32({0, -1});      // biases[2][1]
  h.at(m + 128).f32({1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
  h.at(m + 176).u32(8).u32(2);  // ELU 2
  EXPECT_EQ(h.size(), m + 184);
  h.u32(176);  // group size at 376
  std::size_t g = 384;
  h.at(g).u32(0x0BA51C01).u32(1).u32(6).u32(1).u32(12).u32(1);
  h.at(g + 64).f32({0});
  h.at(g + 128).f32({0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 1, 0, 0, 0, 0, 0});
  EXPECT_EQ(h.size(), g + 176);
  return h.bytes();
}

TEST(NmnRead, GlobalFileFields) {
  auto bytes = global_file();
  auto n = read_nmn(bytes);
  ASSERT_TRUE(n.ok()) << n.error().to_string();
  EXPECT_EQ(n->mode, NmnMode::kGlobal);
  EXPECT_EQ(n->num_morphs, 2u);
  EXPECT_EQ(n->num_curves, 3u);
  EXPECT_EQ(n->input_count(), 3u);
  EXPECT_EQ(n->runtime_name, "net");
  EXPECT_EQ(n->input_mean, (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(n->input_std, (std::vector<float>{2, 1, 1}));
  ASSERT_EQ(n->main.root.type, NmnLayerType::kSequence);
  ASSERT_EQ(n->main.root.children.size(), 3u);
  EXPECT_EQ(n->main.root.children[0].weights, (std::vector<float>{1, -1, 2, 0, 0, 1}));
  EXPECT_EQ(n->main.root.children[1].type, NmnLayerType::kRelu);
  EXPECT_EQ(n->main.input_size, 3u);
  EXPECT_EQ(n->main.output_size, 2u);
  EXPECT_EQ(n->main.root.parameter_count(), 8u + 6u);
  EXPECT_FALSE(n->group.has_value());
}

TEST(NmnRun, GlobalHandComputed) {
  auto n = read_nmn(global_file());
  ASSERT_TRUE(n.ok());
  auto r = NmnRunner::create(*n);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->input_count(), 3u);
  ASSERT_EQ(r->output_count(), 2u);
  // raw (3,1,-2) -> x = (1,1,-2); h = (0.5,-1)+(1,-1)+(2,0)+(0,-2) = (3.5,-4);
  // ReLU (3.5,0); y = (0,1) + 3.5*(1,2) = (3.5, 8).
  // raw (1,0,1) -> x = (0,0,1); h = (0.5,0) -> y = (0,1)+0.5*(1,2) = (0.5,2).
  // raw (-1,0,0) -> x = (-1,0,0); h = (-0.5,0) -> ReLU 0 -> y = (0,1).
  std::vector<float> in{3, 1, -2, 1, 0, 1, -1, 0, 0}, out(6);
  r->run_batch(in, out, 3);
  std::vector<float> want{3.5f, 8, 0.5f, 2, 0, 1};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(out[i], want[i]) << i;
  std::vector<float> one(2);
  r->run(std::span<const float>(in).first(3), one);
  EXPECT_FLOAT_EQ(one[0], 3.5f);
  EXPECT_FLOAT_EQ(one[1], 8.0f);
}

TEST(NmnWrite, GlobalBytesEqualHandBuilt) {
  auto hand = global_file();
  auto n = read_nmn(hand);
  ASSERT_TRUE(n.ok());
  auto out = write_nmn(*n);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(*out, hand);  // padding exact, nothing after the last blob
}

TEST(NmnWrite, FromScratchEqualsHandBuilt) {
  NmnNetwork n;
  n.mode = NmnMode::kGlobal;
  n.num_morphs = 2;
  n.num_curves = 3;
  n.input_mean = {1, 0, 0};
  n.input_std = {2, 1, 1};
  n.runtime_name = "net";
  NmnLayer l1 = make_layer(NmnLayerType::kLinear, 3, 2);
  l1.biases = {0.5f, -1};
  l1.weights = {1, -1, 2, 0, 0, 1};
  NmnLayer relu = make_layer(NmnLayerType::kRelu, 2, 2);
  NmnLayer l2 = make_layer(NmnLayerType::kLinear, 2, 2);
  l2.biases = {0, 1};
  l2.weights = {1, 2, -1, 0.5f};
  n.main.root.type = NmnLayerType::kSequence;
  n.main.root.in = 3;
  n.main.root.out = 2;
  n.main.root.children = {l1, relu, l2};
  n.main.input_size = 3;
  n.main.output_size = 2;
  auto out = write_nmn(n);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(*out, global_file());
  auto back = read_nmn(*out);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, n);
}

TEST(NmnRead, LocalFileWithGroups) {
  auto bytes = local_file();
  auto n = read_nmn(bytes);
  ASSERT_TRUE(n.ok()) << n.error().to_string();
  EXPECT_EQ(n->mode, NmnMode::kLocal);
  EXPECT_EQ(n->num_floats_per_curve, 6u);
  EXPECT_EQ(n->runtime_name, "");
  EXPECT_EQ(n->main.root.children[0].type, NmnLayerType::kMultiLinear);
  EXPECT_EQ(n->main.input_size, 12u);
  EXPECT_EQ(n->main.output_size, 2u);
  ASSERT_TRUE(n->group.has_value());
  EXPECT_EQ(n->group->input_size, 12u);
  EXPECT_EQ(n->output_count(), 3u);

  // Runs only with the group membership.
  EXPECT_FALSE(NmnRunner::create(*n).ok());
  std::vector<std::uint32_t> items{1, 0};  // group 0 = bone 1, bone 0
  auto r = NmnRunner::create(*n, items);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  // bone0 = (-1,0,0,0,0,0), bone1 = (1,0,0,0,0,2).
  // main0 = ELU(bone0[0]) = e^-1 - 1; main1 = ELU(2*bone1[5] - 1) = 3;
  // group = 0.5*sum(bone1) + bone0[0] = 1.5 - 1 = 0.5.
  std::vector<float> in{-1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2}, out(3);
  r->run(in, out);
  EXPECT_NEAR(out[0], -0.6321205588f, 1e-6);
  EXPECT_FLOAT_EQ(out[1], 3.0f);
  EXPECT_FLOAT_EQ(out[2], 0.5f);

  // Local mode writes back to the same bytes.
  auto w = write_nmn(*n);
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  EXPECT_EQ(*w, bytes);
}

TEST(NmnRead, LocalWithoutGroupsEndsAfterMainModel) {
  // Same as local_file with NumGroups = 0 and no group blob.
  auto bytes = local_file();
  bytes[28] = 0;  // NumGroups
  auto with_group = read_nmn(bytes);
  ASSERT_FALSE(with_group.ok());
  EXPECT_EQ(with_group.error().code, "NMN_TRAILING");
  EXPECT_EQ(with_group.error().location.offset, 376u);
  bytes.resize(376);
  auto n = read_nmn(bytes);
  ASSERT_TRUE(n.ok()) << n.error().to_string();
  auto r = NmnRunner::create(*n);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output_count(), 2u);
}

// Sequence[CompressedLinear 1->3, TanH 3]: the uint16 weights end at +262 and
// the next layer's type sits at +264 (4-byte alignment).
std::vector<std::uint8_t> compressed_blob() {
  Hand h;
  h.u32(0x0BA51C01).u32(1).u32(1).u32(2);
  h.u32(5).u32(1).u32(3);          // CompressedLinear in 1 out 3
  h.at(64).f32({0.5f});            // offsets[1]
  h.at(128).f32({0.25f});          // scales[1]
  h.at(192).f32({1, 0, -1});       // biases[3]
  h.at(256).u16(0).u16(4).u16(2);  // weights: 0.5, 1.5, 1.0
  h.at(264).u32(9).u32(3);         // TanH 3
  return h.bytes();
}

TEST(NmnModel, CompressedLinearAndTanh) {
  auto blob = compressed_blob();
  auto m = read_nmn_model(blob);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->input_size, 1u);
  EXPECT_EQ(m->output_size, 3u);
  EXPECT_EQ(m->root.children[0].qweights, (std::vector<std::uint16_t>{0, 4, 2}));
  auto w = write_nmn_model(*m);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, blob);

  NmnNetwork n;
  n.num_curves = 1;
  n.input_mean = {0};
  n.input_std = {1};
  n.main = *m;
  auto r = NmnRunner::create(n);
  ASSERT_TRUE(r.ok());
  std::vector<float> out(3);
  std::vector<float> in{2};
  r->run(in, out);
  // x = 2: pre = (1 + 1, 0 + 3, -1 + 2) = (2, 3, 1).
  EXPECT_NEAR(out[0], 0.9640275801f, 1e-6);
  EXPECT_NEAR(out[1], 0.9950547537f, 1e-6);
  EXPECT_NEAR(out[2], 0.7615941560f, 1e-6);
}

TEST(NmnActivation, KnownPoints) {
  // ELU: x for x > 0, e^x - 1 otherwise.
  EXPECT_FLOAT_EQ(nmn_elu(2.0f), 2.0f);
  EXPECT_FLOAT_EQ(nmn_elu(0.0f), 0.0f);
  EXPECT_NEAR(nmn_elu(-1.0f), -0.6321205588f, 1e-7);
  EXPECT_NEAR(nmn_elu(-0.5f), -0.3934693403f, 1e-7);
  EXPECT_NEAR(nmn_elu(-20.0f), -1.0f, 1e-7);
  // GELU (runtime form): x * sigmoid(1.702 x) = x / (1 + e^(-1.702 x)).
  EXPECT_FLOAT_EQ(nmn_gelu(0.0f), 0.0f);
  EXPECT_NEAR(nmn_gelu(1.0f), 0.8457957659f, 1e-6);
  EXPECT_NEAR(nmn_gelu(-1.0f), -0.1542042341f, 1e-6);
  EXPECT_NEAR(nmn_gelu(0.5f), 0.3503884366f, 1e-6);
  // The tanh-form GELU gives 0.8411920 at 1: we must not be that.
  EXPECT_GT(std::fabs(nmn_gelu(1.0f) - 0.8411920f), 1e-3);
}

// A one-layer network over 4 curve inputs (mean 0, std 1) for activation checks.
NmnNetwork single(NmnLayer layer) {
  NmnNetwork n;
  n.num_curves = 4;
  n.input_mean.assign(4, 0.0f);
  n.input_std.assign(4, 1.0f);
  n.main.root = std::move(layer);
  n.main.input_size = 4;
  n.main.output_size = 4;
  return n;
}

std::vector<float> run_single(const NmnNetwork& n, std::vector<float> in) {
  // Through bytes: what we run is what the reader makes of what we write.
  auto bytes = write_nmn(n);
  EXPECT_TRUE(bytes.ok()) << bytes.error().to_string();
  auto back = read_nmn(*bytes);
  EXPECT_TRUE(back.ok()) << back.error().to_string();
  auto r = NmnRunner::create(*back);
  EXPECT_TRUE(r.ok());
  std::vector<float> out(r->output_count());
  r->run(in, out);
  return out;
}

TEST(NmnActivation, EachLayerType) {
  const std::vector<float> x{-2, -0.5f, 0.5f, 3};
  auto act = [](NmnLayerType t) { return make_layer(t, 4, 4); };
  EXPECT_EQ(run_single(single(act(NmnLayerType::kRelu)), x), (std::vector<float>{0, 0, 0.5f, 3}));
  EXPECT_EQ(run_single(single(act(NmnLayerType::kCopy)), x), x);
  auto t = run_single(single(act(NmnLayerType::kTanh)), x);
  EXPECT_NEAR(t[1], -0.4621171573f, 1e-6);
  EXPECT_NEAR(t[2], 0.4621171573f, 1e-6);
  auto e = run_single(single(act(NmnLayerType::kElu)), x);
  EXPECT_NEAR(e[1], -0.3934693403f, 1e-6);
  EXPECT_FLOAT_EQ(e[3], 3.0f);
  auto g = run_single(single(act(NmnLayerType::kGelu)), x);
  EXPECT_NEAR(g[2], 0.3503884366f, 1e-6);
  EXPECT_NEAR(g[1], -0.5f + 0.3503884366f, 1e-6);  // gelu(-x) = gelu(x) - x

  auto p = act(NmnLayerType::kPrelu);
  p.a = {0.1f, 0.2f, 0.3f, 0.4f};
  auto pr = run_single(single(p), x);
  EXPECT_FLOAT_EQ(pr[0], -0.2f);
  EXPECT_FLOAT_EQ(pr[1], -0.1f);
  EXPECT_FLOAT_EQ(pr[3], 3.0f);

  auto c = act(NmnLayerType::kClamp);
  c.a = {-1, -1, 0, 0};
  c.b = {1, 1, 0.25f, 5};
  EXPECT_EQ(run_single(single(c), x), (std::vector<float>{-1, -0.5f, 0.25f, 3}));

  auto nz = act(NmnLayerType::kNormalize);
  nz.a = {0, 1, 0, 1};
  nz.b = {2, 0.5f, 1, 4};
  EXPECT_EQ(run_single(single(nz), x), (std::vector<float>{-1, -3, 0.5f, 0.5f}));
  auto dn = act(NmnLayerType::kDenormalize);
  dn.a = nz.a;
  dn.b = nz.b;
  EXPECT_EQ(run_single(single(dn), x), (std::vector<float>{-4, 0.75f, 0.5f, 13}));
}

TEST(NmnRead, UnknownLayerIdNamesIdAndOffset) {
  auto bytes = global_file();
  bytes[192 + 8] = 11;  // root type: MemoryCell
  auto n = read_nmn(bytes);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, "NMN_LAYER_UNSUPPORTED");
  EXPECT_NE(n.error().message.find("11"), std::string::npos) << n.error().message;
  EXPECT_NE(n.error().message.find("MemoryCell"), std::string::npos);
  EXPECT_EQ(n.error().location.offset, 200u);
  bytes[192 + 8] = 99;
  n = read_nmn(bytes);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("layer type 99"), std::string::npos) << n.error().message;
}

TEST(NmnRead, EveryPrefixFailsCleanly) {
  for (const auto& file : {global_file(), local_file()}) {
    for (std::size_t len = 0; len < file.size(); ++len) {
      auto n = read_nmn(std::span<const std::uint8_t>(file.data(), len));
      EXPECT_FALSE(n.ok()) << "prefix of " << len << " bytes parsed";
    }
  }
}

TEST(NmnRead, CorruptBytesNeverCrash) {
  auto file = global_file();
  std::vector<float> in{1, 2, 3};
  for (std::size_t i = 0; i < file.size(); ++i) {
    for (std::uint8_t v : {std::uint8_t{0xFF}, std::uint8_t{0x80}, std::uint8_t{0x01}}) {
      auto bad = file;
      bad[i] ^= v;
      auto n = read_nmn(bad);
      if (!n.ok()) continue;
      auto r = NmnRunner::create(*n);
      if (!r.ok() || r->input_count() != 3) continue;
      std::vector<float> out(r->output_count());
      r->run(in, out);
    }
  }
}

TEST(NmnRead, SpecificErrors) {
  auto file = global_file();
  auto expect_code = [](std::vector<std::uint8_t> b, const char* code) {
    auto n = read_nmn(b);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code, code) << n.error().to_string();
  };
  auto b = file;
  b[0] = 0;
  expect_code(b, "NMN_MAGIC");
  expect_code({0x04, 0x13, 0x4A, 0x24}, "NMN_MAGIC");  // 4 bytes are enough to tell
  b = file;
  b[4] = 2;
  expect_code(b, "NMN_VERSION");
  b = file;
  b[8] = 2;
  expect_code(b, "NMN_MODE");
  b = file;
  b[36] = 6;  // NumFloatsPerCurve 6 in global mode
  expect_code(b, "NMN_HEADER");
  b = file;
  b[20] = 0xFF, b[21] = 0xFF, b[22] = 0xFF, b[23] = 0xFF;  // NumBones 2^32-1: no allocation
  expect_code(b, "NMN_TRUNCATED");
  b = file;
  b[140] = 3;  // length 3: the name bytes end with 't', not the NUL
  expect_code(b, "NMN_NAME");
  b = file;
  b.push_back(0);
  expect_code(b, "NMN_TRAILING");
  b = file;
  b[192] = 0;
  expect_code(b, "NMN_MODEL_MAGIC");
  b = file;
  b[148] = 0xFF, b[149] = 0xFF;  // model size past the end
  expect_code(b, "NMN_MODEL_SIZE");
  b = file;
  b[192 + 156] = 3;  // ReLU size 3 after a Linear giving 2
  expect_code(b, "NMN_LAYER_SIZE");
  b = file;
  b[192 + 20] = 0xFF, b[192 + 21] = 0xFF, b[192 + 22] = 0xFF;  // Linear in huge
  expect_code(b, "NMN_TRUNCATED");
}

TEST(NmnRead, DeepSequenceRejected) {
  Hand h;
  h.u32(0x0BA51C01).u32(1);
  for (int i = 0; i < 40; ++i) h.u32(1).u32(1);
  h.u32(7).u32(1);
  auto m = read_nmn_model(h.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "NMN_TOO_DEEP");
}

TEST(NmnRead, WidthWithoutArraysIsBounded) {
  // A ReLU carries only its size: 2^20 + 1 values would make the runner
  // allocate without the file paying for it.
  Hand h;
  h.u32(0x0BA51C01).u32(1).u32(7).u32((1u << 20) + 1);
  auto m = read_nmn_model(h.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "NMN_LAYER_SIZE");
  EXPECT_EQ(m.error().location.offset, 8u);
  Hand ok;
  ok.u32(0x0BA51C01).u32(1).u32(7).u32(1u << 20);
  EXPECT_TRUE(read_nmn_model(ok.bytes()).ok());
}

TEST(NmnRead, TotalValuesAreBounded) {
  // Eight ReLU layers of 2^20 take and give 2^24 values: the limit. A ninth
  // (an 8-byte layer the runner would spend 2^21 operations on) is refused
  // at its type field: 16 + 8·8 bytes into the blob.
  auto relus = [](std::uint32_t count) {
    Hand h;
    h.u32(0x0BA51C01).u32(1).u32(1).u32(count);  // Sequence of count
    for (std::uint32_t i = 0; i < count; ++i) h.u32(7).u32(1u << 20);
    return h;
  };
  EXPECT_TRUE(read_nmn_model(relus(8).bytes()).ok());
  auto m = read_nmn_model(relus(9).bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "NMN_LAYER_SIZE");
  EXPECT_EQ(m.error().location.offset, 80u);

  // A MultiLinear of 2^24 + 1 empty blocks (no rows, no columns: no arrays)
  // counts its blocks: the runner used to loop over them (a fuzzer's 272-byte
  // file ran for seconds).
  Hand blocks;
  blocks.u32(0x0BA51C01).u32(1).u32(6).u32((1u << 24) + 1).u32(0).u32(0);
  blocks.at(64);  // the empty bias and weight arrays start at 64-byte boundaries
  m = read_nmn_model(blocks.bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "NMN_LAYER_SIZE");
  EXPECT_EQ(m.error().location.offset, 8u);
}

TEST(NmnRun, MultiLinearWithoutRowsGivesItsBiases) {
  // A MultiLinear of 0 rows per block takes no inputs and gives its biases;
  // it can only follow a layer that gives none: global network, one curve
  // input, main model Sequence[Linear 1->0, MultiLinear(3 blocks, 0 rows,
  // 1 column)], written, read back and run.
  NmnNetwork n;
  n.mode = NmnMode::kGlobal;
  n.num_curves = 1, n.num_floats_per_curve = 1, n.num_morphs = 3;
  n.input_mean = {0.0f};
  n.input_std = {1.0f};
  NmnLayer to_none = make_layer(NmnLayerType::kLinear, 1, 0);
  NmnLayer ml = make_layer(NmnLayerType::kMultiLinear, 0, 3);
  ml.blocks = 3, ml.rows = 0, ml.cols = 1;
  ml.biases = {0.5f, -1.0f, 2.0f};
  n.main.root = make_layer(NmnLayerType::kSequence, 1, 3);
  n.main.root.children = {to_none, ml};
  n.main.input_size = 1, n.main.output_size = 3;
  auto bytes = write_nmn(n);
  ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
  auto back = read_nmn(*bytes);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  auto r = NmnRunner::create(*back);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  std::vector<float> in{0.25f}, out(3);
  r->run(in, out);
  EXPECT_EQ(out, (std::vector<float>{0.5f, -1.0f, 2.0f}));
}

TEST(NmnRoundTrip, ReadWriteRead) {
  for (const auto& file : {global_file(), local_file()}) {
    auto a = read_nmn(file);
    ASSERT_TRUE(a.ok());
    auto w = write_nmn(*a);
    ASSERT_TRUE(w.ok());
    auto b = read_nmn(*w);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(*a, *b);
  }
}

TEST(NmnWrite, RejectsInconsistentNetworks) {
  auto n = read_nmn(global_file());
  ASSERT_TRUE(n.ok());
  auto bad = *n;
  bad.input_std.pop_back();
  EXPECT_EQ(write_nmn(bad).error().code, "NMN_WRITE");
  bad = *n;
  bad.main.root.children[2].in = 3;
  EXPECT_FALSE(write_nmn(bad).ok());
  bad = *n;
  bad.main.root.children[1].type = NmnLayerType::kLayerNorm;
  EXPECT_FALSE(write_nmn(bad).ok());
  bad = *n;
  bad.num_floats_per_curve = 6;
  EXPECT_FALSE(write_nmn(bad).ok());
}

TEST(NmnSidecar, RoundTripAndChecks) {
  NmnSidecar s;
  s.model = "net.nmn";
  s.curves = {"jaw", "smile", "blink"};
  s.morph_targets = {"mean", "m1", "m2"};
  auto text = write_nmn_sidecar(s);
  auto back = read_nmn_sidecar(text);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, s);

  auto n = read_nmn(global_file());
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(check_nmn_sidecar(s, *n).ok());
  auto more = s;
  more.bones = {"spine"};
  auto st = check_nmn_sidecar(more, *n);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "SIDECAR_MISMATCH");
  EXPECT_NE(st.error().message.find("9 inputs"), std::string::npos) << st.error().message;
  more = s;
  more.morph_targets = {"a", "b", "c", "d"};
  EXPECT_FALSE(check_nmn_sidecar(more, *n).ok());

  EXPECT_EQ(nmn_sidecar_path("dir/net.nmn"), "dir/net.bmd_ue.json");
  EXPECT_EQ(nmn_sidecar_path("a.b/net"), "a.b/net.bmd_ue.json");
}

TEST(NmnSidecar, SchemaErrorsPointAtTheValue) {
  auto r = read_nmn_sidecar(
      R"({"format":"charkit.bmd_ue","version":1,"mode":"global","bones":["a",3],"curves":[],"morphTargets":[]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "SIDECAR_SCHEMA");
  EXPECT_EQ(r.error().location.pointer, "/bones/1");
  r = read_nmn_sidecar(R"({"format":"x","version":1})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().location.pointer, "/format");
  r = read_nmn_sidecar(
      R"({"format":"charkit.bmd_ue","version":1,"mode":"local","bones":["a","b"],"curves":[],"morphTargets":[],"groups":[[1,0]]})");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  auto n = read_nmn(local_file());
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(check_nmn_sidecar(*r, *n).ok());
  EXPECT_EQ(nmn_sidecar_group_items(*r), (std::vector<std::uint32_t>{1, 0}));
}

// "outputs" says what the network's outputs are (the import's clamp follows
// it); absent, it is unknown, and only the two names are accepted.
TEST(NmnSidecar, OutputsKind) {
  const std::string head =
      R"({"format":"charkit.bmd_ue","version":1,"mode":"global","bones":[],"curves":[],"morphTargets":[])";
  auto r = read_nmn_sidecar(head + "}");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->outputs, NmnOutputs::kUnknown);
  EXPECT_EQ(write_nmn_sidecar(*r).find("outputs"), std::string::npos);
  r = read_nmn_sidecar(head + R"(,"outputs":"basisCoefficients"})");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->outputs, NmnOutputs::kBasisCoefficients);
  EXPECT_NE(write_nmn_sidecar(*r).find(R"("outputs": "basisCoefficients")"), std::string::npos);
  r = read_nmn_sidecar(head + R"(,"outputs":"morphWeights"})");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->outputs, NmnOutputs::kMorphWeights);
  for (const char* bad : {R"("weights")", "1", "null"}) {
    r = read_nmn_sidecar(head + R"(,"outputs":)" + bad + "}");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, "SIDECAR_SCHEMA");
    EXPECT_EQ(r.error().location.pointer, "/outputs");
  }
}

}  // namespace
}  // namespace charkit::deformer
