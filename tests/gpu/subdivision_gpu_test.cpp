// The subdivision kernels on the GPU backend (lavapipe in CI) with the
// validation layers on, against the CPU reference: vertices and strengths
// within the device's division/square-root precision, and the triangles of
// the two-level allocation equal (as a set) to the reference kernel 3's for
// the strengths the GPU computed. Skipped where no Vulkan device exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "charkit/deform/subdivision.h"
#include "charkit/gpu/context.h"
#include "charkit/gpu/error_codes.h"

namespace charkit::deform {
namespace {

struct Mesh {
  std::vector<std::uint8_t> vertices;
  std::vector<std::uint32_t> extras;
  std::vector<std::uint32_t> indices;
  SubdivTopology top;
  SubdivMeshView view() const {
    return {static_cast<std::uint32_t>(extras.size()),
            vertices,
            extras,
            top.index_bits,
            top.edge_count,
            top.edges};
  }
};

/// An n × n grid folded into a wavy sheet (boundary and interior edges),
/// random strengths, geometry scale 0.05.
Mesh sheet(int n, unsigned index_bits) {
  Mesh m;
  std::mt19937 rng(9);
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j) {
      const float x = static_cast<float>(i) / static_cast<float>(n);
      const float y = static_cast<float>(j) / static_cast<float>(n);
      const float z = 0.1F * std::sin(6.0F * x) * std::cos(5.0F * y);
      const float v[10] = {x, y, z, 0, 0, 1, 1, 0, 0, (i + j) % 2 == 0 ? 1.0F : -1.0F};
      const auto* b = reinterpret_cast<const std::uint8_t*>(v);
      m.vertices.insert(m.vertices.end(), b, b + 40);
      m.extras.push_back(pack_subdiv_extras(0.05F, rng() % 64));
    }
  auto id = [n](int i, int j) { return static_cast<std::uint32_t>(i * (n + 1) + j); };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      m.indices.insert(m.indices.end(), {id(i, j), id(i + 1, j), id(i + 1, j + 1)});
      m.indices.insert(m.indices.end(), {id(i, j), id(i + 1, j + 1), id(i, j + 1)});
    }
  auto top =
      build_subdiv_topology(m.indices, static_cast<std::uint32_t>(m.extras.size()), index_bits);
  EXPECT_TRUE(static_cast<bool>(top));
  m.top = std::move(*top);
  return m;
}

std::vector<std::array<std::uint32_t, 3>> triangles(const std::vector<std::uint32_t>& idx,
                                                    std::size_t count) {
  std::vector<std::array<std::uint32_t, 3>> t;
  for (std::size_t i = 0; i + 2 < count; i += 3) t.push_back({idx[i], idx[i + 1], idx[i + 2]});
  std::sort(t.begin(), t.end());
  return t;
}

/// `cap` (bytes, 0: none) limits every buffer as on a device with that
/// storage-buffer range, which makes the kernels chunk their work.
void check(unsigned index_bits, bool smooth_constrained, std::uint64_t cap = 0) {
  gpu::ContextOptions o;
  o.validation = true;
  o.max_buffer_bytes = cap;
  auto ctx = gpu::Context::create(o);
  if (!ctx) {
    EXPECT_EQ(ctx.error().code, gpu::codes::GPU_UNAVAILABLE.str());
    GTEST_SKIP() << "no Vulkan device: " << ctx.error().message;
  }
  const Mesh m = sheet(60, index_bits);
  SubdivParams p;
  p.distance_control = true;
  p.reference = {0.5F, 0.5F, 2.0F};
  p.projection_ratio = 60.0F;
  p.split_threshold = 0.15F;
  p.branch_multiplier = 3.0F;
  std::vector<std::uint32_t> bits;
  if (smooth_constrained) {
    bits.assign((m.top.edge_count + 31) / 32, 0);
    std::mt19937 rng(3);
    for (auto& w : bits) w = static_cast<std::uint32_t>(rng());
  }
  auto ref = run_subdivision({p, m.view(), m.indices, m.top.triangle_edges, bits});
  ASSERT_TRUE(ref) << ref.error().message;
  SubdivOutput g;
  g.vertices.resize(ref->vertices.size());
  g.edge_strength.resize(ref->edge_strength.size());
  g.indices.resize(m.indices.size() * 4);
  const SubdivBuffers buffers{g.vertices, g.edge_strength, g.indices, &g.draw};
  const SubdivisionJob on_gpu{
      p, m.view(), m.indices, m.top.triangle_edges, bits, buffers, SubdivIndexOrder::kGroups};
  ASSERT_TRUE(on_gpu.run_gpu(**ctx));
  // Vertices and strengths: the same formulas; a GPU's division and square
  // root may be a few ulps off the CPU's correctly rounded ones.
  ASSERT_EQ(g.vertices.size() % 4, 0U);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < g.vertices.size(); i += 4) {
    float a, b;
    std::memcpy(&a, ref->vertices.data() + i, 4);
    std::memcpy(&b, g.vertices.data() + i, 4);
    EXPECT_NEAR(a, b, 1e-5F * std::max(1.0F, std::fabs(a))) << "float " << i / 4;
    differing += a != b ? 1 : 0;
  }
  std::printf("%zu of %zu output floats differ from the CPU's bits\n", differing,
              g.vertices.size() / 4);
  // lavapipe rounds division and square root correctly, and the shaders
  // keep every multiply-add unfused (precise): the CPU's bits exactly.
  if ((*ctx)->device().driver_name == "llvmpipe") {
    EXPECT_EQ(differing, 0U);
  }
  // The index kernel: the reference's triangles for the GPU's strengths.
  std::vector<std::uint32_t> want(m.indices.size() * 4);
  DrawIndexedIndirect want_draw;
  SubdivIndexJob k3{m.view(), m.indices, m.top.triangle_edges, g.edge_strength, p.split_threshold,
                    want,     &want_draw};
  ASSERT_TRUE(k3.validate());
  ASSERT_TRUE(k3.run());
  EXPECT_EQ(g.draw.index_count, want_draw.index_count);
  EXPECT_EQ(g.draw.instance_count, 1U);
  EXPECT_EQ(triangles(g.indices, g.draw.index_count), triangles(want, want_draw.index_count));
  // Triangle order: kernel 3 on the CPU on the GPU's strengths, the
  // reference's indices in the reference's order.
  SubdivOutput t = g;
  SubdivisionJob in_order = on_gpu;
  in_order.out = {t.vertices, t.edge_strength, t.indices, &t.draw};
  in_order.order = SubdivIndexOrder::kTriangles;
  ASSERT_TRUE(in_order.run_gpu(**ctx));
  ASSERT_EQ(t.draw.index_count, want_draw.index_count);
  EXPECT_TRUE(std::equal(want.begin(), want.begin() + want_draw.index_count, t.indices.begin()));
  // Some but not all edges split: the case means something.
  const auto split = std::count_if(g.edge_strength.begin(), g.edge_strength.end(),
                                   [&](float s) { return s > p.split_threshold; });
  EXPECT_GT(split, 0);
  EXPECT_LT(static_cast<std::size_t>(split), g.edge_strength.size());
  const auto messages = (*ctx)->validation_messages();
  EXPECT_TRUE(messages.empty()) << messages.front();
}

// Only the arrays read at any index (vertices, extras, strengths, bitmap)
// must fit one binding; past that, GPU_LIMIT.
TEST(SubdivisionGpu, RandomAccessArrayPastTheBufferLimitIsGpuLimit) {
  gpu::ContextOptions o;
  o.max_buffer_bytes = 4096;
  auto ctx = gpu::Context::create(o);
  if (!ctx) GTEST_SKIP() << "no Vulkan device";
  const Mesh m = sheet(20, 16);
  SubdivOutput g;
  g.vertices.resize((m.extras.size() + m.top.edge_count) * kSubdivOutVertexBytes);
  g.edge_strength.resize(m.top.edge_count);
  g.indices.resize(m.indices.size() * 4);
  const SubdivBuffers buffers{g.vertices, g.edge_strength, g.indices, &g.draw};
  auto st =
      SubdivisionJob{{}, m.view(), m.indices, m.top.triangle_edges, {}, buffers}.run_gpu(**ctx);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, gpu::codes::GPU_LIMIT.str());
  EXPECT_NE(st.error().message.find("input vertex array"), std::string::npos) << st.error().message;
}

TEST(SubdivisionGpu, SixteenBitEdgesMatchTheCpu) {
  check(16, false);
}
TEST(SubdivisionGpu, ThirtyTwoBitEdgesAndConstraintsMatchTheCpu) {
  check(32, true);
}
// A 160,000-byte range: the input vertices (148,840 bytes) fit; the 14,641
// output records go in 5 chunks of 3,333 (not a multiple of the 64-wide
// workgroup, so a chunk ends inside a group and one chunk holds both
// vertices and edges) and the 7,200 triangles in 3 chunks.
TEST(SubdivisionGpu, ChunkedPastOneBindingMatchesTheCpu) {
  check(16, false, 160000);
  check(32, true, 160000);
}

}  // namespace
}  // namespace charkit::deform
