// Sparse morph kernel (§10) with deltas and positions worked out by hand.
#include "charkit/deform/sparse_morph.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "charkit/deform/error_codes.h"

namespace charkit::deform {
namespace {

using ByteVec = std::vector<std::uint8_t>;

struct Rec {
  std::uint32_t v;
  float dx, dy, dz;
};

// Records laid out byte by byte as §10 says: UInt32 LE index + 3 × Float32 LE.
ByteVec records(const std::vector<Rec>& rs) {
  ByteVec b;
  for (const Rec& r : rs) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(r.v >> (8 * i)));
    for (float f : {r.dx, r.dy, r.dz}) {
      std::uint32_t u = 0;
      std::memcpy(&u, &f, 4);
      for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
    }
  }
  return b;
}

ByteVec payload(const std::string& json, const ByteVec& recs) {
  ByteVec b;
  const auto j = static_cast<std::uint32_t>(json.size());
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(j >> (8 * i)));
  b.insert(b.end(), json.begin(), json.end());
  b.insert(b.end(), recs.begin(), recs.end());
  return b;
}

// Base positions in a 20-byte stride stream (xyz then 8 bytes of something
// else), starting one byte into the buffer so the floats are unaligned.
ByteVec base_stream(const std::vector<float>& xyz, std::size_t lead = 1) {
  ByteVec b(lead, 0xEE);
  for (std::size_t v = 0; v * 3 < xyz.size(); ++v) {
    ByteVec vert(20, 0xAB);
    std::memcpy(vert.data(), &xyz[v * 3], 12);
    b.insert(b.end(), vert.begin(), vert.end());
  }
  return b;
}

struct Fixture {
  ByteVec base = base_stream({1, 2, 3, 10, 20, 30, -1, -2, -3});
  ByteVec a = records({{0, 4, 0, 0}});
  ByteVec b = records({{0, 0, 8, 0}, {1, 2, 2, 2}});
  ByteVec c = records({{0, 1, 1, 1}});
  std::vector<SparseChannel> channels;
  std::vector<float> deltas = std::vector<float>(9);
  std::vector<float> out = std::vector<float>(9);

  Fixture() {
    // Channel 1: tick 250 between frames 0 and 1000 → weights 0.75 / 0.25.
    SparseChannel c1;
    c1.frames[0] = {a, 0.75f};
    c1.frames[1] = {b, 0.25f};
    c1.frame_count = 2;
    // Channel 2: exactly on a frame → weight 1, same vertex 0 as channel 1.
    SparseChannel c2;
    c2.frames[0] = {c, 1.0f};
    c2.frame_count = 1;
    channels = {c1, c2};
  }
  SparseMorphJob job() {
    SparseMorphJob j;
    j.vertex_count = 3;
    j.base = std::span<const std::uint8_t>(base).subspan(1);
    j.base_stride = 20;
    j.channels = channels;
    j.deltas = deltas;
    j.out = out;
    return j;
  }
};

// v0: base (1,2,3) + 0.75·(4,0,0) + 0.25·(0,8,0) + (1,1,1) = (5,5,4)
// v1: base (10,20,30) + 0.25·(2,2,2) = (10.5,20.5,30.5)
// v2: untouched (-1,-2,-3)
const std::vector<float> kExpected = {5, 5, 4, 10.5f, 20.5f, 30.5f, -1, -2, -3};

TEST(SparseMorph, ReferenceByHand) {
  Fixture f;
  SparseMorphJob j = f.job();
  ASSERT_TRUE(j.validate());
  ASSERT_TRUE(detail::run_sparse_morph_reference(j).ok());
  EXPECT_EQ(f.out, kExpected);
}

TEST(SparseMorph, FastByHand) {
  Fixture f;
  SparseMorphJob j = f.job();
  ASSERT_TRUE(j.run().ok());
  EXPECT_EQ(f.out, kExpected);
  std::fill(f.out.begin(), f.out.end(), 0.0f);
  ASSERT_TRUE(j.run({&core::default_executor(), 2}).ok());
  EXPECT_EQ(f.out, kExpected);
}

TEST(SparseMorph, NoChannelsCopiesBase) {
  Fixture f;
  f.channels.clear();
  SparseMorphJob j = f.job();
  ASSERT_TRUE(j.run().ok());
  EXPECT_EQ(f.out, (std::vector<float>{1, 2, 3, 10, 20, 30, -1, -2, -3}));
}

TEST(SparseMorph, ValidateRejectsBadSpans) {
  Fixture f;
  SparseMorphJob j = f.job();
  auto refused = [&j](std::string_view code, std::string_view says) {
    const core::Status st = j.validate();
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, code);
    EXPECT_NE(st.error().message.find(says), std::string::npos) << st.error().message;
  };
  j.base = j.base.first(2 * 20 + 11);  // last vertex one byte short
  refused(codes::DEFORM_SHAPE, "fewer than 3 vertices");
  j = f.job();
  j.base_stride = 8;
  refused(codes::DEFORM_SHAPE, "base_stride 8");
  j = f.job();
  j.out = std::span<float>(f.out).first(8);
  refused(codes::DEFORM_SHAPE, "3 floats per vertex");
  ByteVec odd(15);
  std::vector<SparseChannel> bad(1);
  bad[0].frames[0] = {odd, 1.0f};
  bad[0].frame_count = 1;
  j = f.job();
  j.channels = bad;
  refused(codes::DEFORM_SHAPE, "channel 0, frame 0: the records are not a multiple of 16");
  bad[0].frame_count = 3;
  refused(codes::DEFORM_SHAPE, "channel 0 has more than 2 frames");
  bad[0].frames[0] = {{}, std::numeric_limits<float>::quiet_NaN()};
  bad[0].frame_count = 1;
  refused(codes::DEFORM_WEIGHT, "the weight is not finite");
}

TEST(SparseMorph, VertexOutOfRangeIsAnError) {
  Fixture f;
  ByteVec r = records({{1, 1, 1, 1}, {3, 1, 1, 1}});  // vertex 3 of 3
  std::vector<SparseChannel> ch(1);
  ch[0].frames[0] = {r, 1.0f};
  ch[0].frame_count = 1;
  SparseMorphJob j = f.job();
  j.channels = ch;
  ASSERT_TRUE(j.validate());
  auto s = detail::run_sparse_morph_reference(j);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "BEM_MORPH_VERTEX");
  EXPECT_EQ(s.error().location.offset, 16u);
  auto s2 = j.run();
  ASSERT_FALSE(s2.ok());
  EXPECT_EQ(s2.error().code, "BEM_MORPH_VERTEX");
}

// n vertices (70,000: enough for the threaded path; 300,000: outputs written
// with streaming stores), 6 channels of random
// distinct vertices, 1 or 2 frames with random weights. sorted: every frame
// sorted by vertex (the tiled path) except frame `unsorted_frame` (-1: none).
void fast_equals_reference(bool sorted, int unsorted_frame, std::uint32_t n = 70000) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  std::vector<float> xyz(static_cast<std::size_t>(n) * 3);
  for (float& x : xyz) x = val(rng);
  ByteVec base(xyz.size() * 4);
  std::memcpy(base.data(), xyz.data(), base.size());
  std::vector<ByteVec> frames;
  std::vector<std::uint32_t> ids(n);
  for (std::uint32_t i = 0; i < n; ++i) ids[i] = i;
  for (int k = 0; k < 12; ++k) {
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<Rec> rs;
    for (std::uint32_t i = 0; i < n / 7; ++i) rs.push_back({ids[i], val(rng), val(rng), val(rng)});
    if (sorted && k != unsorted_frame)
      std::sort(rs.begin(), rs.end(), [](const Rec& a, const Rec& b) { return a.v < b.v; });
    frames.push_back(records(rs));
  }
  std::vector<SparseChannel> ch(6);
  for (int c = 0; c < 6; ++c) {
    const float w = 0.5f + 0.5f * val(rng);
    ch[static_cast<std::size_t>(c)].frames[0] = {frames[static_cast<std::size_t>(2 * c)], w};
    ch[static_cast<std::size_t>(c)].frames[1] = {frames[static_cast<std::size_t>(2 * c + 1)],
                                                 1.0f - w};
    ch[static_cast<std::size_t>(c)].frame_count = c == 5 ? 1u : 2u;
  }
  std::vector<float> d(xyz.size()), ref(xyz.size()), fast(xyz.size());
  SparseMorphJob j;
  j.vertex_count = n;
  j.base = base;
  j.channels = ch;
  j.deltas = d;
  j.out = ref;
  ASSERT_TRUE(j.validate());
  ASSERT_TRUE(detail::run_sparse_morph_reference(j).ok());
  const std::vector<float> ref_deltas = d;
  j.out = fast;
  core::ThreadPool pool(2);
  // max_threads 0 is the executor's concurrency; without an executor the
  // calling thread runs it whatever max_threads says.
  for (std::size_t threads : {0u, 1u, 2u, 3u})
    for (core::Executor* ex : std::array<core::Executor*, 4>{
             nullptr, &pool, &core::serial_executor(), &core::default_executor()}) {
      std::fill(fast.begin(), fast.end(), 0.0f);
      std::fill(d.begin(), d.end(), 7.0f);
      ASSERT_TRUE(j.run({ex, threads}).ok());
      EXPECT_EQ(0, std::memcmp(ref.data(), fast.data(), ref.size() * 4)) << threads << " threads";
      // The summed deltas are an output too (§10: summed, then added once).
      EXPECT_EQ(0, std::memcmp(ref_deltas.data(), d.data(), d.size() * 4)) << threads << " threads";
    }
}

TEST(SparseMorph, FastEqualsReferenceUnsorted) {
  fast_equals_reference(false, -1);
}
TEST(SparseMorph, FastEqualsReferenceSorted) {
  fast_equals_reference(true, -1);
}
TEST(SparseMorph, FastEqualsReferenceOneFrameUnsorted) {
  fast_equals_reference(true, 7);
}
TEST(SparseMorph, FastEqualsReferenceStreamingStores) {
  fast_equals_reference(true, -1, 300000);
  fast_equals_reference(true, 3, 300000);
}
// The portable (SSE2) record kernel, which a CPU with AVX-512 would not run.
TEST(SparseMorph, PortableKernelEqualsReference) {
  detail::use_portable_morph_kernel(true);
  fast_equals_reference(true, -1);
  fast_equals_reference(true, 7);
  fast_equals_reference(true, -1, 300000);
  detail::use_portable_morph_kernel(false);
}

TEST(SparseMorph, ManyChannelsSpanBatches) {
  // 100 channels (more than one batch of cursors) on 20,000 vertices, sorted.
  const std::uint32_t n = 20000;
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  std::vector<float> xyz(static_cast<std::size_t>(n) * 3, 1.0f);
  ByteVec base(xyz.size() * 4);
  std::memcpy(base.data(), xyz.data(), base.size());
  std::vector<ByteVec> frames;
  for (int k = 0; k < 100; ++k) {
    std::vector<Rec> rs;
    for (std::uint32_t v = static_cast<std::uint32_t>(k); v < n; v += 37)
      rs.push_back({v, val(rng), val(rng), val(rng)});
    frames.push_back(records(rs));
  }
  std::vector<SparseChannel> ch(100);
  for (std::size_t c = 0; c < 100; ++c) {
    ch[c].frames[0] = {frames[c], 0.3f};
    ch[c].frame_count = 1;
  }
  std::vector<float> d(xyz.size()), ref(xyz.size()), fast(xyz.size());
  SparseMorphJob j;
  j.vertex_count = n;
  j.base = base;
  j.channels = ch;
  j.deltas = d;
  j.out = ref;
  ASSERT_TRUE(detail::run_sparse_morph_reference(j).ok());
  j.out = fast;
  ASSERT_TRUE(j.run().ok());
  EXPECT_EQ(0, std::memcmp(ref.data(), fast.data(), ref.size() * 4));
}

TEST(SparseDeltas, ParsesTheLayout) {
  const std::string json = R"({"count":2,"encoding":"sparse-position-f32"})";
  ByteVec p = payload(json, records({{2, 1, 2, 3}, {0, 4, 5, 6}}));
  ASSERT_EQ(p.size(), 4 + json.size() + 32);
  auto d = parse_sparse_deltas(p, 3, 2);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d->count, 2u);
  ASSERT_EQ(d->records.size(), 32u);
  EXPECT_EQ(d->records.data(), p.data() + 4 + json.size());
}

TEST(SparseDeltas, RejectsMalformedBytes) {
  const std::string json = R"({"count":1,"encoding":"sparse-position-f32"})";
  const ByteVec one = records({{0, 1, 2, 3}});
  auto code = [](const ByteVec& p, std::uint32_t vc = 3, std::int64_t n = -1) {
    auto r = parse_sparse_deltas(p, vc, n);
    return r.ok() ? std::string("ok") : r.error().code;
  };
  EXPECT_EQ(code(ByteVec{1, 0}), "BEM_DELTA_SIZE");
  EXPECT_EQ(code(payload("", one)), "BEM_DELTA_JSON");  // J = 0
  ByteVec big = payload(json, one);
  big[1] = 0x20;  // J = 8192 + …
  EXPECT_EQ(code(big), "BEM_DELTA_JSON");
  ByteVec past = payload(json, {});
  past[0] = static_cast<std::uint8_t>(json.size() + 1);  // J runs past the end
  EXPECT_EQ(code(past), "BEM_DELTA_SIZE");
  EXPECT_EQ(code(payload(R"({"count":1})", one)), "BEM_DELTA_JSON");
  EXPECT_EQ(code(payload(R"({"count":1,"encoding":"sparse-position-f16"})", one)),
            "BEM_DELTA_JSON");
  EXPECT_EQ(code(payload(R"({"count":1,"encoding":"sparse-position-f32","x":1})", one)),
            "BEM_DELTA_JSON");
  EXPECT_EQ(code(payload(R"({"count":-1,"encoding":"sparse-position-f32"})", one)),
            "BEM_DELTA_JSON");
  EXPECT_EQ(code(payload(R"({"count":1,"count":1,"encoding":"sparse-position-f32"})", one)),
            "BEM_DELTA_JSON");
  EXPECT_EQ(code(payload(json, records({{0, 1, 2, 3}, {1, 1, 1, 1}}))),
            "BEM_DELTA_SIZE");  // 4+J+16N
  ByteVec trunc = payload(json, one);
  trunc.pop_back();
  EXPECT_EQ(code(trunc), "BEM_DELTA_SIZE");
  EXPECT_EQ(code(payload(json, one), 3, 2), "BEM_DELTA_COUNT");
  EXPECT_EQ(code(payload(json, records({{3, 1, 2, 3}}))), "BEM_DELTA_VERTEX");
  const std::string two = R"({"count":2,"encoding":"sparse-position-f32"})";
  EXPECT_EQ(code(payload(two, records({{1, 1, 2, 3}, {1, 1, 1, 1}}))), "BEM_DELTA_VERTEX");
  EXPECT_EQ(code(payload(json, records({{0, 1, std::numeric_limits<float>::infinity(), 3}}))),
            "BEM_DELTA_VALUE");
  EXPECT_EQ(code(payload(json, one)), "ok");
}

}  // namespace
}  // namespace charkit::deform
