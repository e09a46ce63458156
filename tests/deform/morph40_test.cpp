// The 40-byte sparse morph blend (deform/morph40.h): records and vertices
// built byte by byte from the layout, results worked out by hand; the
// threaded run equals the scalar reference bit for bit; the validator
// refuses what would race or overrun.
#include "charkit/deform/morph40.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace charkit::deform {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put_u32(Bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_f32(Bytes& b, float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  put_u32(b, u);
}

/// One record: vertex, then position, normal and tangent deltas.
void record(Bytes& b, std::uint32_t v, std::initializer_list<float> pos,
            std::initializer_list<float> nrm, std::initializer_list<float> tan) {
  put_u32(b, v);
  for (float f : pos) put_f32(b, f);
  for (float f : nrm) put_f32(b, f);
  for (float f : tan) put_f32(b, f);
}

float f32_at(const Bytes& b, std::size_t offset) {
  float f;
  std::memcpy(&f, b.data() + offset, 4);
  return f;
}

/// Three vertices: position (v, 2v, 3v), normal (0, 0, 1), tangent (1, 0, 0, w = −1).
Bytes base_vertices(std::uint32_t count) {
  Bytes b;
  for (std::uint32_t v = 0; v < count; ++v) {
    for (float f :
         {float(v), 2.0F * float(v), 3.0F * float(v), 0.0F, 0.0F, 1.0F, 1.0F, 0.0F, 0.0F, -1.0F})
      put_f32(b, f);
  }
  return b;
}

TEST(Morph40, HandComputedTwoTargetsOneSharedVertex) {
  Bytes vertices = base_vertices(3);
  ASSERT_EQ(vertices.size(), 120u);
  Bytes a;  // weight 0.5: vertices 0 and 2
  record(a, 2, {2, 0, 0}, {0, 0.5F, 0}, {0, 0, 4});
  record(a, 0, {1, 1, 1}, {0, 0, 0}, {0, 0, 0});
  ASSERT_EQ(a.size(), 80u);
  Bytes b;  // weight 2: vertex 2 again, in another target
  record(b, 2, {0, 1, 0}, {0.25F, 0, 0}, {-0.5F, 0, 0});
  const Morph40Target targets[] = {{a, 0.5F}, {b, 2.0F}};
  Morph40Job job{3, targets, vertices};
  ASSERT_TRUE(job.validate().ok());
  ASSERT_TRUE(job.run().ok());
  // Vertex 0: position (0,0,0) + 0.5·(1,1,1) = (0.5, 0.5, 0.5); the rest unchanged.
  EXPECT_EQ(f32_at(vertices, 0), 0.5F);
  EXPECT_EQ(f32_at(vertices, 4), 0.5F);
  EXPECT_EQ(f32_at(vertices, 8), 0.5F);
  EXPECT_EQ(f32_at(vertices, 20), 1.0F);
  // Vertex 1 untouched: (1, 2, 3).
  EXPECT_EQ(f32_at(vertices, 40), 1.0F);
  EXPECT_EQ(f32_at(vertices, 44), 2.0F);
  // Vertex 2 (bytes 80..119): position (2,4,6) + 0.5·(2,0,0) + 2·(0,1,0) = (3, 6, 6);
  // normal (0,0,1) + 0.5·(0,0.5,0) + 2·(0.25,0,0) = (0.5, 0.25, 1), not normalised;
  // tangent (1,0,0) + 0.5·(0,0,4) + 2·(−0.5,0,0) = (0, 0, 2); w stays −1.
  const float want[10] = {3, 6, 6, 0.5F, 0.25F, 1, 0, 0, 2, -1};
  for (int c = 0; c < 10; ++c) EXPECT_EQ(f32_at(vertices, 80 + 4 * c), want[c]) << c;
}

TEST(Morph40, ThreadedEqualsScalarBitForBit) {
  constexpr std::uint32_t kVertices = 60000;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> val(-0.3F, 0.3F);
  std::vector<Bytes> records(12);
  std::vector<Morph40Target> targets;
  std::vector<std::uint32_t> order(kVertices);
  for (std::uint32_t v = 0; v < kVertices; ++v) order[v] = v;
  for (std::size_t t = 0; t < records.size(); ++t) {
    std::shuffle(order.begin(), order.end(), rng);
    for (std::uint32_t k = 0; k < kVertices / 10; ++k)
      record(records[t], order[k], {val(rng), val(rng), val(rng)}, {val(rng), val(rng), val(rng)},
             {val(rng), val(rng), val(rng)});
    targets.push_back({records[t], val(rng) * 3.0F});
  }
  Bytes scalar = base_vertices(kVertices);
  Bytes threaded = scalar;
  Morph40Job a{kVertices, targets, scalar};
  ASSERT_TRUE(a.validate().ok());
  ASSERT_TRUE(a.run().ok());
  core::ThreadPool pool(4);
  Morph40Job b{kVertices, targets, threaded};
  ASSERT_TRUE(b.run({&pool}).ok());
  EXPECT_TRUE(scalar == threaded);
  EXPECT_FALSE(scalar == base_vertices(kVertices));
}

TEST(Morph40, ValidatorRefusesRacesOverrunsAndBadValues) {
  Bytes vertices = base_vertices(3);
  Bytes dup;
  record(dup, 1, {1, 0, 0}, {0, 0, 0}, {0, 0, 0});
  record(dup, 2, {1, 0, 0}, {0, 0, 0}, {0, 0, 0});
  record(dup, 1, {1, 0, 0}, {0, 0, 0}, {0, 0, 0});
  Morph40Target t[] = {{dup, 1.0F}};
  auto s = (Morph40Job{3, t, vertices}).validate();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "DEFORM_MORPH40_DUPLICATE");
  EXPECT_EQ(s.error().location.offset, 80u);  // the third record

  Bytes far;
  record(far, 3, {1, 0, 0}, {0, 0, 0}, {0, 0, 0});
  t[0] = {far, 1.0F};
  const Bytes before = vertices;
  s = (Morph40Job{3, t, vertices}).validate();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "DEFORM_MORPH40_VERTEX");
  // run() checks the index too and writes nothing for it.
  EXPECT_EQ((Morph40Job{3, t, vertices}).run().error().code, "DEFORM_MORPH40_VERTEX");
  core::ThreadPool pool(2);
  EXPECT_EQ((Morph40Job{3, t, vertices}).run({&pool}).error().code, "DEFORM_MORPH40_VERTEX");
  EXPECT_TRUE(vertices == before);

  Bytes nan;
  record(nan, 0, {0, std::numeric_limits<float>::quiet_NaN(), 0}, {0, 0, 0}, {0, 0, 0});
  t[0] = {nan, 1.0F};
  EXPECT_EQ((Morph40Job{3, t, vertices}).validate().error().code, "DEFORM_MORPH40_VALUE");
  Bytes ok;
  record(ok, 0, {1, 0, 0}, {0, 0, 0}, {0, 0, 0});
  t[0] = {ok, std::numeric_limits<float>::infinity()};
  EXPECT_EQ((Morph40Job{3, t, vertices}).validate().error().code, "DEFORM_MORPH40_WEIGHT");
  t[0] = {std::span<const std::uint8_t>(ok).first(39), 1.0F};
  EXPECT_EQ((Morph40Job{3, t, vertices}).validate().error().code, "DEFORM_MORPH40_SIZE");
  t[0] = {ok, 1.0F};
  EXPECT_EQ((Morph40Job{4, t, vertices}).validate().error().code, "DEFORM_MORPH40_SIZE");
  // The same vertex in two different targets is fine.
  const Morph40Target two[] = {{ok, 1.0F}, {ok, 1.0F}};
  EXPECT_TRUE((Morph40Job{3, two, vertices}.validate().ok()));
}

}  // namespace
}  // namespace charkit::deform
