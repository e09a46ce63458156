// The 40-byte morph blend on the GPU backend (Vulkan; lavapipe in CI) with
// the Khronos validation layers on: bit for bit the CPU reference, and not
// one validation message. Skipped where no Vulkan device exists (the CPU
// device is what such a machine runs).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "charkit/deform/morph40.h"
#include "charkit/gpu/context.h"
#include "charkit/gpu/error_codes.h"

namespace charkit::deform {
namespace {

std::unique_ptr<gpu::Context> context_or_skip() {
  gpu::ContextOptions o;
  o.validation = true;
  auto c = gpu::Context::create(o);
  if (!c) {
    EXPECT_EQ(c.error().code, gpu::codes::GPU_UNAVAILABLE.str()) << c.error().message;
    return nullptr;
  }
  return std::move(*c);
}

void put_record(std::vector<std::uint8_t>& b, std::uint32_t v, const float d[9]) {
  std::uint8_t rec[40];
  std::memcpy(rec, &v, 4);
  std::memcpy(rec + 4, d, 36);
  b.insert(b.end(), rec, rec + 40);
}

TEST(GpuBackend, ListsDevicesOrSaysWhy) {
  auto devices = gpu::list_devices();
  if (!devices) {
    EXPECT_EQ(devices.error().code, gpu::codes::GPU_UNAVAILABLE.str());
    EXPECT_FALSE(devices.error().message.empty());
    return;
  }
  for (const gpu::DeviceInfo& d : *devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.max_storage_buffer_range, 0U);
    EXPECT_GT(d.max_workgroup_count[0], 0U);
  }
}

TEST(Morph40Gpu, VertexHitByTwoTargetsByHand) {
  auto ctx = context_or_skip();
  if (!ctx) GTEST_SKIP() << "no Vulkan device";
  // Two vertices; target A moves vertex 1 by (1,2,3) at weight 0.5, target B
  // moves it by (−1,0,0) at weight 2 and vertex 0's normal by (0,0,1).
  std::vector<std::uint8_t> vertices(80, 0);
  const float v1[10] = {1, 1, 1, 0, 1, 0, 1, 0, 0, -1};
  std::memcpy(vertices.data() + 40, v1, 40);
  std::vector<std::uint8_t> a;
  std::vector<std::uint8_t> b;
  const float da[9] = {1, 2, 3, 0, 0, 0, 0, 0, 0};
  const float db1[9] = {-1, 0, 0, 0, 0, 0, 0, 0, 0};
  const float db0[9] = {0, 0, 0, 0, 0, 1, 0, 0, 0};
  put_record(a, 1, da);
  put_record(b, 1, db1);
  put_record(b, 0, db0);
  const Morph40Target targets[] = {{a, 0.5F}, {b, 2.0F}};
  Morph40Job job{2, targets, vertices};
  ASSERT_TRUE(job.validate());
  ASSERT_TRUE(job.run_gpu(*ctx));
  float out[20];
  std::memcpy(out, vertices.data(), 80);
  // vertex 1: (1,1,1) + 0.5 (1,2,3) + 2 (−1,0,0) = (−0.5, 2, 2.5); w untouched.
  EXPECT_EQ(out[10], -0.5F);
  EXPECT_EQ(out[11], 2.0F);
  EXPECT_EQ(out[12], 2.5F);
  EXPECT_EQ(out[19], -1.0F);
  EXPECT_EQ(out[5], 2.0F);  // vertex 0's normal z
  EXPECT_TRUE(ctx->validation_messages().empty()) << ctx->validation_messages().front();
}

void equals_cpu(std::uint64_t max_buffer_bytes);

TEST(Morph40Gpu, EqualsTheCpuReferenceBitForBit) {
  equals_cpu(0);
}

// A vertex array past one binding's range (here a 100,000-byte cap: 2,500
// vertices per chunk, 8 chunks) is blended chunk by chunk, with the same bits.
TEST(Morph40Gpu, ChunkedVertexArrayEqualsTheCpu) {
  equals_cpu(100000);
}

void equals_cpu(std::uint64_t max_buffer_bytes) {
  gpu::ContextOptions o;
  o.validation = true;
  o.max_buffer_bytes = max_buffer_bytes;
  auto created = gpu::Context::create(o);
  if (!created) GTEST_SKIP() << "no Vulkan device: " << created.error().message;
  std::unique_ptr<gpu::Context> ctx = std::move(*created);
  if (!ctx) GTEST_SKIP() << "no Vulkan device";
  constexpr std::uint32_t kVertices = 20000;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::vector<std::uint8_t> base(kVertices * 40);
  for (std::size_t i = 0; i < base.size() / 4; ++i) {
    const float f = u(rng);
    std::memcpy(base.data() + 4 * i, &f, 4);
  }
  // Five targets touching 10 % of the vertices each (some vertices several times).
  std::vector<std::vector<std::uint8_t>> records(5);
  std::vector<Morph40Target> targets;
  for (std::size_t t = 0; t < records.size(); ++t) {
    for (std::uint32_t v = static_cast<std::uint32_t>(t); v < kVertices; v += 10) {
      float d[9];
      for (float& x : d) x = u(rng);
      put_record(records[t], v, d);
    }
    targets.push_back({records[t], 0.1F + 0.37F * static_cast<float>(t)});
  }
  std::vector<std::uint8_t> cpu = base;
  std::vector<std::uint8_t> gpu = base;
  Morph40Job cj{kVertices, targets, cpu};
  Morph40Job gj{kVertices, targets, gpu};
  ASSERT_TRUE(cj.validate());
  ASSERT_TRUE(cj.run());
  ASSERT_TRUE(gj.run_gpu(*ctx));
  EXPECT_NE(cpu, base);
  EXPECT_EQ(gpu, cpu);  // bit-identical
  EXPECT_TRUE(ctx->validation_messages().empty()) << ctx->validation_messages().front();
}

}  // namespace
}  // namespace charkit::deform
