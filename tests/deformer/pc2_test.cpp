// PC2 point caches: bytes built by hand from the layout, round trip, and
// every malformed header refused with its byte offset.
#include "charkit/deformer/pc2.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace charkit::deformer {
namespace {

void put_u32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_f32(std::vector<std::uint8_t>& b, float f) {
  put_u32(b, std::bit_cast<std::uint32_t>(f));
}

// Header by hand: magic, version, points, start frame, sample rate, samples.
std::vector<std::uint8_t> header(std::int32_t points, std::int32_t samples,
                                 std::int32_t version = 1) {
  std::vector<std::uint8_t> b;
  const char magic[12] = "POINTCACHE2";  // 11 characters + the NUL
  b.insert(b.end(), magic, magic + 12);
  put_u32(b, static_cast<std::uint32_t>(version));
  put_u32(b, static_cast<std::uint32_t>(points));
  put_f32(b, 1.0F);  // start frame
  put_f32(b, 0.5F);  // sample rate
  put_u32(b, static_cast<std::uint32_t>(samples));
  return b;
}

TEST(RigPc2, ReadsHandBuiltBytes) {
  auto b = header(2, 2);
  ASSERT_EQ(b.size(), 32u);
  for (float f : {1.F, 2.F, 3.F, 4.F, 5.F, 6.F, -1.F, -2.F, -3.F, 0.25F, 0.5F, 0.75F})
    put_f32(b, f);
  auto c = read_pc2(b);
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->point_count, 2u);
  EXPECT_EQ(c->sample_count, 2u);
  EXPECT_EQ(c->start_frame, 1.0F);
  EXPECT_EQ(c->sample_rate, 0.5F);
  ASSERT_EQ(c->positions.size(), 12u);
  EXPECT_EQ(c->sample(1)[0], -1.0F);  // sample 1, point 0, x
  EXPECT_EQ(c->sample(1)[5], 0.75F);  // sample 1, point 1, z
}

TEST(RigPc2, WriterProducesTheSameBytes) {
  auto b = header(1, 2);
  for (float f : {1.F, 2.F, 3.F, 4.F, 5.F, 6.F}) put_f32(b, f);
  PointCache c;
  c.start_frame = 1.0F;
  c.sample_rate = 0.5F;
  c.point_count = 1;
  c.sample_count = 2;
  c.positions = {1, 2, 3, 4, 5, 6};
  auto w = write_pc2(c);
  ASSERT_TRUE(w);
  EXPECT_EQ(*w, b);
  const auto path = std::filesystem::temp_directory_path() / "charkit_rig_pc2_test.pc2";
  ASSERT_TRUE(write_pc2_file(c, path));
  auto back = read_pc2_file(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->positions, c.positions);
}

TEST(RigPc2, TruncatedHeader) {
  auto b = header(1, 1);
  b.resize(20);
  auto c = read_pc2(b);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "PC2_TRUNCATED");
  EXPECT_EQ(c.error().location.offset, 20u);
}

TEST(RigPc2, DeclaredSizeLargerThanFile) {
  // 1000 × 1000 points declared, 12 bytes of data present: refused from the
  // sizes, before any allocation.
  auto b = header(1000, 1000);
  for (int i = 0; i < 3; ++i) put_f32(b, 0.0F);
  auto c = read_pc2(b);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "PC2_SIZE");
  EXPECT_EQ(c.error().location.offset, 44u);  // where the data ends
}

TEST(RigPc2, OversizedHeaderIsRefusedByLimit) {
  auto b = header(0x7fffffff, 0x7fffffff);
  auto c = read_pc2(b);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "PC2_TOO_LARGE");
  EXPECT_EQ(c.error().location.offset, 16u);
}

TEST(RigPc2, TrailingBytesMagicVersionCountAndNan) {
  auto b = header(1, 1);
  for (int i = 0; i < 4; ++i) put_f32(b, 0.0F);  // one float too many
  EXPECT_EQ(read_pc2(b).error().code, "PC2_SIZE");
  b = header(1, 1, 2);
  for (int i = 0; i < 3; ++i) put_f32(b, 0.0F);
  EXPECT_EQ(read_pc2(b).error().code, "PC2_VERSION");
  EXPECT_EQ(read_pc2(b).error().location.offset, 12u);
  b[0] = 'X';
  EXPECT_EQ(read_pc2(b).error().code, "PC2_MAGIC");
  b = header(-1, 1);
  EXPECT_EQ(read_pc2(b).error().code, "PC2_COUNT");
  b = header(1, 1);
  put_f32(b, 0.0F);
  put_f32(b, std::numeric_limits<float>::quiet_NaN());
  put_f32(b, 0.0F);
  auto c = read_pc2(b);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "PC2_NOT_FINITE");
  EXPECT_EQ(c.error().location.offset, 36u);
}

// Found by pc2_fuzz: zero points with a huge sample count is a valid, empty
// cache; the writer must write it back (it used to refuse it as PC2_SHAPE).
TEST(RigPc2, ZeroPointsManySamplesRoundTrips) {
  const auto b = header(0, 0x29293dff);
  auto c = read_pc2(b);
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->point_count, 0u);
  EXPECT_EQ(c->sample_count, 0x29293dffu);
  EXPECT_TRUE(c->positions.empty());
  auto w = write_pc2(*c);
  ASSERT_TRUE(w) << w.error().to_string();
  EXPECT_EQ(*w, b);
}

}  // namespace
}  // namespace charkit::deformer
