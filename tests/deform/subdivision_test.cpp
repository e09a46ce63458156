// The subdivision kernels (the character-rendering frame analysis §6,
// docs/deform/subdivision.md) against cases worked by hand: a tetrahedron
// (full adjacency everywhere), a strip with boundary edges, every split
// pattern of one triangle, the distance control and the constrained branch;
// the threaded kernels against the scalar reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "charkit/core/half.h"
#include "charkit/core/parallel.h"
#include "charkit/deform/subdivision.h"

namespace charkit::deform {
namespace {

struct TestMesh {
  std::vector<std::uint8_t> vertices;  // 40 bytes each
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

/// Vertices with positions p, normal (0,0,1) unless given, tangent (1,0,0,1).
TestMesh make_mesh(const std::vector<std::array<float, 3>>& p, std::vector<std::uint32_t> indices,
                   std::uint32_t strength6 = 63, float geometry_scale = 1.0F,
                   unsigned index_bits = 0, const std::vector<std::array<float, 3>>& normals = {}) {
  TestMesh m;
  m.vertices.resize(p.size() * kSubdivInVertexBytes);
  for (std::size_t v = 0; v < p.size(); ++v) {
    const std::array<float, 3> n = normals.empty() ? std::array<float, 3>{0, 0, 1} : normals[v];
    const float x[10] = {p[v][0], p[v][1], p[v][2], n[0], n[1], n[2], 1, 0, 0, 1};
    std::memcpy(m.vertices.data() + v * kSubdivInVertexBytes, x, sizeof x);
    m.extras.push_back(pack_subdiv_extras(geometry_scale, strength6));
  }
  m.indices = std::move(indices);
  auto top = build_subdiv_topology(m.indices, static_cast<std::uint32_t>(p.size()), index_bits);
  EXPECT_TRUE(static_cast<bool>(top)) << (top ? "" : top.error().message);
  if (top) m.top = std::move(*top);
  return m;
}

std::array<float, 4> out_float4(const SubdivOutput& o, std::size_t vertex, std::size_t which) {
  std::array<float, 4> r;
  std::memcpy(r.data(), o.vertices.data() + vertex * kSubdivOutVertexBytes + which * 16, 16);
  return r;
}

/// Edge id of the edge joining a and b.
std::uint32_t edge_of(const TestMesh& m, std::uint32_t a, std::uint32_t b) {
  const SubdivMeshView v = m.view();
  for (std::uint32_t e = 0; e < v.edge_count; ++e) {
    const SubdivEdge ed = v.edge(e);
    if ((ed.a == a && ed.b == b) || (ed.a == b && ed.b == a)) return e;
  }
  ADD_FAILURE() << "no edge " << a << "-" << b;
  return 0;
}

// The tetrahedron: (0,0,0), (1,0,0), (0,1,0), (0,0,1), outward winding.
const std::vector<std::array<float, 3>> kTetra = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
const std::vector<std::uint32_t> kTetraIndices = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};

TEST(SubdivTopology, TetrahedronEdgeTableByHand) {
  TestMesh m = make_mesh(kTetra, kTetraIndices);
  ASSERT_EQ(m.top.index_bits, 16U);
  ASSERT_EQ(m.top.edge_count, 6U);
  // Edges numbered by smaller then larger endpoint: 0-1, 0-2, 0-3, 1-2, 1-3, 2-3.
  // Edge 0-1: its first half-edge is triangle 0's corner 2 (1 -> 0), opposite
  // corner 2; the other triangle (0,1,3) gives 3. Packed a | b << 16, c | d << 16.
  EXPECT_EQ(m.top.edges[0], 1U | (0U << 16));
  EXPECT_EQ(m.top.edges[1], 2U | (3U << 16));
  // Edge 2-3 (the last): half-edges triangle 2 corner 1 (3 -> 2, h = 7) and
  // triangle 3 corner 1 (2 -> 3, h = 10); the first is h = 7: a = 3, b = 2,
  // c = triangle 2's third corner 0, d = triangle 3's third corner 1.
  EXPECT_EQ(m.top.edges[10], 3U | (2U << 16));
  EXPECT_EQ(m.top.edges[11], 0U | (1U << 16));
  // Triangle 0 (0,2,1): edges 0-2 (1), 2-1 (3), 1-0 (0).
  EXPECT_EQ(m.top.triangle_edges[0], 1U);
  EXPECT_EQ(m.top.triangle_edges[1], 3U);
  EXPECT_EQ(m.top.triangle_edges[2], 0U);
  // 32-bit tables hold the same edges unpacked.
  TestMesh w = make_mesh(kTetra, kTetraIndices, 63, 1.0F, 32);
  ASSERT_EQ(w.top.edges.size(), 24U);
  EXPECT_EQ(w.top.edges[0], 1U);
  EXPECT_EQ(w.top.edges[1], 0U);
  EXPECT_EQ(w.top.edges[2], 2U);
  EXPECT_EQ(w.top.edges[3], 3U);
  EXPECT_EQ(w.top.triangle_edges, m.top.triangle_edges);
}

TEST(SubdivTopology, BoundaryAndNonManifoldEdgesHaveNoOpposites) {
  // A strip (0,1,2), (2,1,3): only 1-2 is shared.
  TestMesh m = make_mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, {0, 1, 2, 2, 1, 3});
  ASSERT_EQ(m.top.edge_count, 5U);
  for (std::uint32_t e = 0; e < 5; ++e) {
    const SubdivEdge ed = m.view().edge(e);
    const bool shared = std::min(ed.a, ed.b) == 1 && std::max(ed.a, ed.b) == 2;
    EXPECT_EQ(ed.c != SubdivEdge::kNone, shared) << e;
    EXPECT_EQ(ed.d != SubdivEdge::kNone, shared) << e;
  }
  // Three triangles on one edge: no full adjacency.
  TestMesh f = make_mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}},
                         {0, 1, 2, 1, 0, 3, 0, 1, 4});
  const SubdivEdge ed = f.view().edge(edge_of(f, 0, 1));
  EXPECT_EQ(ed.c, SubdivEdge::kNone);
  EXPECT_EQ(ed.d, SubdivEdge::kNone);
}

TEST(SubdivTopology, WeldedSeamEdgesGetFullAdjacency) {
  // Two triangles across a UV seam: (0,1,2) and (4,3,5), where 3 and 4 are
  // copies of 1 and 2. Without the weld map the diagonal is two boundary
  // edges (midpoints); with it both copies compute the Loop point
  // 3/8 (p1 + p2) + 1/8 (p0 + p5).
  const std::vector<std::array<float, 3>> p = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0},
                                               {1, 0, 0}, {0, 1, 0}, {1, 1, 1}};
  const std::vector<std::uint32_t> idx = {0, 1, 2, 4, 3, 5};
  TestMesh open = make_mesh(p, idx);
  EXPECT_EQ(open.top.edge_count, 6U);
  const TestMesh& co = open;
  auto o = run_subdivision({{}, co.view(), co.indices, co.top.triangle_edges});
  ASSERT_TRUE(o);
  EXPECT_EQ(out_float4(*o, 6 + edge_of(open, 1, 2), 0), (std::array<float, 4>{0.5F, 0.5F, 0, 1}));
  TestMesh seam = open;
  const std::vector<std::uint32_t> weld = {0, 1, 2, 1, 2, 5};
  auto top = build_subdiv_topology(seam.indices, 6, 0, weld);
  ASSERT_TRUE(top);
  seam.top = std::move(*top);
  EXPECT_EQ(seam.top.edge_count, 6U);  // still two edges on the seam, one per vertex pair
  const TestMesh& cs = seam;
  auto w = run_subdivision({{}, cs.view(), cs.indices, cs.top.triangle_edges});
  ASSERT_TRUE(w);
  for (const auto& [a, b] : {std::pair{1U, 2U}, std::pair{3U, 4U}}) {
    const auto q = out_float4(*w, 6 + edge_of(seam, a, b), 0);
    EXPECT_FLOAT_EQ(q[0], 0.5F) << a;
    EXPECT_FLOAT_EQ(q[1], 0.5F) << a;
    EXPECT_FLOAT_EQ(q[2], 0.125F) << a;
  }
  // The triangles keep their own vertices: the seam's new vertices differ.
  EXPECT_NE(edge_of(seam, 1, 2), edge_of(seam, 3, 4));
  EXPECT_FALSE(build_subdiv_topology(seam.indices, 6, 0, std::vector<std::uint32_t>{0, 1}));
}

TEST(SubdivTopology, RefusesBadInput) {
  auto a = build_subdiv_topology(std::vector<std::uint32_t>{0, 1}, 3);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, "DEFORM_SUBDIV_SIZE");
  auto b = build_subdiv_topology(std::vector<std::uint32_t>{0, 1, 3}, 3);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "DEFORM_SUBDIV_VERTEX");
  auto c = build_subdiv_topology(std::vector<std::uint32_t>{0, 1, 2}, 70000, 16);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "DEFORM_SUBDIV_SIZE");
}

TEST(Subdivision, TetrahedronLoopEdgePointsAtFullStrength) {
  TestMesh m = make_mesh(kTetra, kTetraIndices);
  const TestMesh& cm = m;
  auto o = run_subdivision({{}, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(o) << o.error().message;
  // Edge 0-1: 3/8 (a + b) + 1/8 (c + d) = 3/8 (1,0,0) + 1/8 ((0,1,0) + (0,0,1)).
  const auto p = out_float4(*o, 4 + edge_of(m, 0, 1), 0);
  EXPECT_FLOAT_EQ(p[0], 0.375F);
  EXPECT_FLOAT_EQ(p[1], 0.125F);
  EXPECT_FLOAT_EQ(p[2], 0.125F);
  EXPECT_FLOAT_EQ(p[3], 1.0F);  // w: the edge strength
  // Edge 1-2: 3/8 ((1,0,0) + (0,1,0)) + 1/8 ((0,0,0) + (0,0,1)).
  const auto q = out_float4(*o, 4 + edge_of(m, 1, 2), 0);
  EXPECT_FLOAT_EQ(q[0], 0.375F);
  EXPECT_FLOAT_EQ(q[1], 0.375F);
  EXPECT_FLOAT_EQ(q[2], 0.125F);
  // Original vertices are copied: position, strength in w, normal, tangent.
  const auto v3 = out_float4(*o, 3, 0);
  EXPECT_EQ(v3, (std::array<float, 4>{0, 0, 1, 1}));
  EXPECT_EQ(out_float4(*o, 3, 1), (std::array<float, 4>{0, 0, 1, 0}));
  EXPECT_EQ(out_float4(*o, 3, 2), (std::array<float, 4>{1, 0, 0, 1}));
  // Every edge split: 4 × 4 triangles, 48 indices, the draw command says so.
  EXPECT_EQ(o->draw.index_count, 48U);
  EXPECT_EQ(o->draw.instance_count, 1U);
  EXPECT_EQ(o->draw.first_index, 0U);
  EXPECT_EQ(o->draw.vertex_offset, 0);
  EXPECT_EQ(o->draw.first_instance, 0U);
  EXPECT_EQ(o->indices.size(), 48U);
}

TEST(Subdivision, StrengthInterpolatesFromMidpointAndSmoothOffGivesMidpoints) {
  // Vertex 0 strength 63, vertex 1 strength 0: edge 0-1's strength is 1/2
  // (average), so its point is halfway from the midpoint to the Loop point:
  // (0.5,0,0) + 0.5 ((0.375,0.125,0.125) − (0.5,0,0)) = (0.4375, 0.0625, 0.0625).
  TestMesh m = make_mesh(kTetra, kTetraIndices);
  m.extras[1] = pack_subdiv_extras(1.0F, 0);
  const TestMesh& cm = m;
  auto o = run_subdivision({{}, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(o);
  const std::uint32_t e01 = edge_of(m, 0, 1);
  const auto p = out_float4(*o, 4 + e01, 0);
  EXPECT_FLOAT_EQ(p[0], 0.4375F);
  EXPECT_FLOAT_EQ(p[1], 0.0625F);
  EXPECT_FLOAT_EQ(p[2], 0.0625F);
  EXPECT_FLOAT_EQ(o->edge_strength[e01], 0.5F);
  // The other rules: min gives 0 (not split), max gives 1.
  SubdivParams pmin;
  pmin.edge_rule = EdgeStrengthRule::kMinimum;
  auto omin = run_subdivision({pmin, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(omin);
  EXPECT_EQ(omin->edge_strength[e01], 0.0F);
  // Edges 0-1, 1-2, 1-3 are not split: triangles (0,2,1), (0,1,3), (1,2,3)
  // have one split edge each (2 triangles), (0,3,2) three (4): 10 triangles.
  EXPECT_EQ(omin->draw.index_count, 30U);
  SubdivParams pmax;
  pmax.edge_rule = EdgeStrengthRule::kMaximum;
  auto omax = run_subdivision({pmax, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(omax);
  EXPECT_EQ(omax->edge_strength[e01], 1.0F);
  // Smoothing off: the midpoint whatever the strength.
  SubdivParams flat;
  flat.smooth = false;
  auto of = run_subdivision({flat, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(of);
  EXPECT_EQ(out_float4(*of, 4 + edge_of(m, 2, 3), 0), (std::array<float, 4>{0, 0.5F, 0.5F, 1}));
}

TEST(Subdivision, BoundaryEdgesTakeTheMidpoint) {
  // Strip (0,1,2), (2,1,3) in the plane z = 0 with vertex 3 raised: the
  // shared edge 1-2 is smoothed toward 1/8 (0 + 3), the boundary ones are not.
  TestMesh m = make_mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 1}}, {0, 1, 2, 2, 1, 3});
  const TestMesh& cm = m;
  auto o = run_subdivision({{}, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(o);
  EXPECT_EQ(out_float4(*o, 4 + edge_of(m, 1, 3), 0), (std::array<float, 4>{1, 0.5F, 0.5F, 1}));
  EXPECT_EQ(out_float4(*o, 4 + edge_of(m, 0, 1), 0), (std::array<float, 4>{0.5F, 0, 0, 1}));
  const auto p = out_float4(*o, 4 + edge_of(m, 1, 2), 0);
  EXPECT_FLOAT_EQ(p[0], 0.375F + 0.125F);
  EXPECT_FLOAT_EQ(p[1], 0.375F + 0.125F);
  EXPECT_FLOAT_EQ(p[2], 0.125F);
}

TEST(Subdivision, ConstrainedBranchProjectsOntoTheNormalDirection) {
  // Edge 0-1 of the tetrahedron with both normals (0,0,1): the displacement
  // (−0.125, 0.125, 0.125) projects to (0, 0, 0.125): the point (0.5, 0, 0.125).
  TestMesh m = make_mesh(kTetra, kTetraIndices);
  const std::uint32_t e01 = edge_of(m, 0, 1);
  std::vector<std::uint32_t> bits((m.top.edge_count + 31) / 32, 0);
  bits[e01 / 32] |= 1U << (e01 % 32);
  const TestMesh& cm = m;
  auto o = run_subdivision({{}, cm.view(), cm.indices, cm.top.triangle_edges, bits});
  ASSERT_TRUE(o);
  const auto p = out_float4(*o, 4 + e01, 0);
  EXPECT_FLOAT_EQ(p[0], 0.5F);
  EXPECT_FLOAT_EQ(p[1], 0.0F);
  EXPECT_FLOAT_EQ(p[2], 0.125F);
  // An unconstrained edge keeps the plain Loop point.
  const auto q = out_float4(*o, 4 + edge_of(m, 1, 2), 0);
  EXPECT_FLOAT_EQ(q[0], 0.375F);
  // A bitmap of the wrong size is refused.
  std::vector<std::uint32_t> wrong(3, 0);
  auto bad = run_subdivision({{}, cm.view(), cm.indices, cm.top.triangle_edges, wrong});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "DEFORM_SUBDIV_SIZE");
  // run_subdivision owns the outputs: a job that brings its own is refused.
  std::vector<float> mine(cm.top.edge_count);
  SubdivisionJob owned{{}, cm.view(), cm.indices, cm.top.triangle_edges};
  owned.out.edge_strength = mine;
  auto refused = run_subdivision(owned);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "DEFORM_SUBDIV_SIZE");
  EXPECT_NE(refused.error().message.find("leave the job's out empty"), std::string::npos);
}

TEST(Subdivision, NewVertexNormalsAndTangentsFromTheEndpoints) {
  TestMesh m = make_mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {0, 1, 2}, 63, 1.0F, 0,
                         {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}});
  const TestMesh& cm = m;
  auto o = run_subdivision({{}, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(o);
  const auto n = out_float4(*o, 3 + edge_of(m, 0, 1), 1);
  const float h = 1.0F / std::sqrt(2.0F);
  EXPECT_FLOAT_EQ(n[0], h);
  EXPECT_FLOAT_EQ(n[1], 0.0F);
  EXPECT_FLOAT_EQ(n[2], h);
  EXPECT_EQ(n[3], 0.0F);
  EXPECT_EQ(out_float4(*o, 3 + edge_of(m, 0, 1), 2), (std::array<float, 4>{1, 0, 0, 1}));
}

TEST(Subdivision, DistanceControlFollowsTheFormula) {
  // One vertex at distance 10 from the reference with geometry scale 2^-8
  // (exact in half): projected = 2^-8 / 10 × 1978.1837, weight =
  // saturate((projected − 0.7) × 5) ≈ 0.3636; branch 3 lifts it past 1, and
  // the 6-bit strength 21 caps it at 1/3.
  const float g = 1.0F / 256.0F;
  TestMesh m = make_mesh({{10, 0, 0}, {10, 1, 0}, {10, 0, 1}}, {0, 1, 2}, 63, g);
  SubdivParams p;
  p.distance_control = true;
  const TestMesh& cm = m;
  auto o = run_subdivision({p, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(o);
  const double projected = g / 10.0 * 1978.1837;
  const double weight = std::clamp((projected - 0.7) * 5.0, 0.0, 1.0);
  EXPECT_NEAR(out_float4(*o, 0, 0)[3], weight, 1e-5);
  EXPECT_GT(weight, 0.3);
  EXPECT_LT(weight, 0.4);
  p.branch_multiplier = 3.0F;
  auto o3 = run_subdivision({p, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(o3);
  EXPECT_EQ(out_float4(*o3, 0, 0)[3], 1.0F);
  m.extras[0] = pack_subdiv_extras(g, 21);
  auto o21 = run_subdivision({p, cm.view(), cm.indices, cm.top.triangle_edges});
  ASSERT_TRUE(o21);
  EXPECT_FLOAT_EQ(out_float4(*o21, 0, 0)[3], 21.0F / 63.0F);
  // Far away the weight reaches 0: nothing splits.
  TestMesh far = make_mesh({{1000, 0, 0}, {1000, 1, 0}, {1000, 0, 1}}, {0, 1, 2}, 63, g);
  p.branch_multiplier = 1.0F;
  const TestMesh& cf = far;
  auto of = run_subdivision({p, cf.view(), cf.indices, cf.top.triangle_edges});
  ASSERT_TRUE(of);
  EXPECT_EQ(of->draw.index_count, 3U);
  EXPECT_EQ(of->indices, (std::vector<std::uint32_t>{0, 1, 2}));
}

/// One triangle (0,1,2) with chosen edges split; edges 0-1 = 0, 0-2 = 1, 1-2 = 2.
std::vector<std::uint32_t> split_one(unsigned mask01_12_20) {
  TestMesh m = make_mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {0, 1, 2});
  std::vector<float> strength(3, 0.0F);
  if (mask01_12_20 & 1U) strength[0] = 1.0F;
  if (mask01_12_20 & 2U) strength[2] = 1.0F;
  if (mask01_12_20 & 4U) strength[1] = 1.0F;
  std::vector<std::uint32_t> out(12);
  DrawIndexedIndirect draw;
  const TestMesh& cm = m;
  SubdivIndexJob job{cm.view(), m.indices, m.top.triangle_edges, strength, 0.0F, out, &draw};
  EXPECT_TRUE(job.validate());
  EXPECT_TRUE(job.run());
  out.resize(draw.index_count);
  return out;
}

TEST(SubdivIndex, EverySplitPatternOfOneTriangle) {
  // New vertices: 3 + edge: m01 = 3, m20 = 4, m12 = 5.
  EXPECT_EQ(split_one(0), (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(split_one(1), (std::vector<std::uint32_t>{0, 3, 2, 3, 1, 2}));
  EXPECT_EQ(split_one(2), (std::vector<std::uint32_t>{1, 5, 0, 5, 2, 0}));
  EXPECT_EQ(split_one(4), (std::vector<std::uint32_t>{2, 4, 1, 4, 0, 1}));
  EXPECT_EQ(split_one(3), (std::vector<std::uint32_t>{3, 1, 5, 0, 3, 5, 0, 5, 2}));
  EXPECT_EQ(split_one(6), (std::vector<std::uint32_t>{5, 2, 4, 1, 5, 4, 1, 4, 0}));
  EXPECT_EQ(split_one(5), (std::vector<std::uint32_t>{4, 0, 3, 2, 4, 3, 2, 3, 1}));
  EXPECT_EQ(split_one(7), (std::vector<std::uint32_t>{0, 3, 4, 3, 1, 5, 4, 5, 2, 3, 5, 4}));
}

TEST(SubdivIndex, SplitsKeepAreaAndWinding) {
  // Positions of the 3 corners and the 3 midpoints: every pattern's
  // triangles cover the triangle exactly, all counter-clockwise.
  const float px[6] = {0, 1, 0, 0.5F, 0, 0.5F};
  const float py[6] = {0, 0, 1, 0, 0.5F, 0.5F};
  for (unsigned mask = 0; mask < 8; ++mask) {
    const auto idx = split_one(mask);
    EXPECT_EQ(idx.size(), 3U * (1 + static_cast<unsigned>(std::popcount(mask)))) << mask;
    double area = 0;
    for (std::size_t t = 0; t + 2 < idx.size(); t += 3) {
      const double a = 0.5 * ((px[idx[t + 1]] - px[idx[t]]) * (py[idx[t + 2]] - py[idx[t]]) -
                              (px[idx[t + 2]] - px[idx[t]]) * (py[idx[t + 1]] - py[idx[t]]));
      EXPECT_GT(a, 0.0) << "mask " << mask << " triangle " << t / 3;
      area += a;
    }
    EXPECT_DOUBLE_EQ(area, 0.5) << mask;
  }
}

TEST(SubdivIndex, ValidateRefusesWrongEdgesAndSmallOutput) {
  TestMesh m = make_mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {0, 1, 2});
  std::vector<float> strength(3, 1.0F);
  std::vector<std::uint32_t> out(12);
  DrawIndexedIndirect draw;
  std::vector<std::uint32_t> te = m.top.triangle_edges;
  std::swap(te[0], te[1]);
  const TestMesh& cm = m;
  SubdivIndexJob job{cm.view(), m.indices, te, strength, 0.0F, out, &draw};
  auto st = job.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_EDGE");
  te[0] = 7;
  st = job.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_EDGE");
  std::vector<std::uint32_t> small(11);
  SubdivIndexJob job2{cm.view(), m.indices, m.top.triangle_edges, strength, 0.0F, small, &draw};
  st = job2.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_SIZE");
}

TEST(SubdivMesh, ValidateRefusesBadVerticesAndExtras) {
  TestMesh m = make_mesh(kTetra, kTetraIndices);
  m.extras[2] |= 1U << 22;
  auto st = m.view().validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_VALUE");
  m.extras[2] = pack_subdiv_extras(-1.0F, 10);
  st = m.view().validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_VALUE");
  m.extras[2] = pack_subdiv_extras(1.0F, 10);
  const float nan = std::nanf("");
  std::memcpy(m.vertices.data() + 40 + 16, &nan, 4);
  st = m.view().validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_VALUE");
  EXPECT_EQ(st.error().location.offset, std::optional<std::uint64_t>{40});
  m = make_mesh(kTetra, kTetraIndices);
  m.top.edges[1] = 9U | (3U << 16);  // opposite corner 9 of 4 vertices
  st = m.view().validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_VERTEX");
  SubdivParams p;
  p.branch_multiplier = 2.0F;
  std::vector<std::uint8_t> out((4 + 6) * 48);
  std::vector<float> strength(6);
  m = make_mesh(kTetra, kTetraIndices);
  SubdivStrengthJob job{p, m.view(), out, strength};
  st = job.validate();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SUBDIV_PARAM");
}

/// A closed UV sphere of about n × 2n quads with a seeded wobble.
TestMesh sphere(int n, unsigned index_bits, std::uint32_t strength_seed) {
  std::vector<std::array<float, 3>> p;
  std::vector<std::uint32_t> idx;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wobble(0.95F, 1.05F);
  p.push_back({0, 0, 1});
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < 2 * n; ++j) {
      const float th = 3.14159265F * static_cast<float>(i) / static_cast<float>(n);
      const float ph = 3.14159265F * static_cast<float>(j) / static_cast<float>(n);
      const float r = wobble(rng);
      p.push_back(
          {r * std::sin(th) * std::cos(ph), r * std::sin(th) * std::sin(ph), r * std::cos(th)});
    }
  p.push_back({0, 0, -1});
  const auto ring = [n](int i, int j) {
    return static_cast<std::uint32_t>(1 + (i - 1) * 2 * n + (j % (2 * n)));
  };
  const auto south = static_cast<std::uint32_t>(p.size() - 1);
  for (int j = 0; j < 2 * n; ++j) {
    idx.insert(idx.end(), {0, ring(1, j), ring(1, j + 1)});
    idx.insert(idx.end(), {south, ring(n - 1, j + 1), ring(n - 1, j)});
  }
  for (int i = 1; i + 1 < n; ++i)
    for (int j = 0; j < 2 * n; ++j) {
      idx.insert(idx.end(), {ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)});
      idx.insert(idx.end(), {ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)});
    }
  TestMesh m = make_mesh(p, idx, 63, 0.05F, index_bits);
  std::mt19937 srng(strength_seed);
  for (auto& x : m.extras) x = pack_subdiv_extras(0.05F, srng() % 64);
  return m;
}

TEST(Subdivision, ThreadedKernelsEqualTheReference) {
  // A sphere with a hole (boundary edges among interior ones), some edges
  // constrained, the distance control on.
  TestMesh holed = sphere(40, 0, 3);
  holed.indices.erase(holed.indices.begin() + 300, holed.indices.begin() + 330);
  auto holed_top =
      build_subdiv_topology(holed.indices, static_cast<std::uint32_t>(holed.extras.size()));
  ASSERT_TRUE(holed_top);
  holed.top = std::move(*holed_top);
  const TestMesh& m = holed;
  std::vector<std::uint32_t> bits((m.top.edge_count + 31) / 32);
  std::mt19937 brng(11);
  for (auto& w : bits) w = static_cast<std::uint32_t>(brng());
  SubdivParams p;
  p.distance_control = true;
  p.reference = {3, 0, 0};
  p.split_threshold = 0.2F;
  auto ref = run_subdivision({p, m.view(), m.indices, m.top.triangle_edges, bits});
  ASSERT_TRUE(ref);
  core::ThreadPool pool(3);
  // Triangle order over threads (chunks counted, then placed): the same
  // indices as the reference, whatever the number of chunks.
  for (std::size_t max_threads : {0U, 1U, 2U}) {
    auto same =
        run_subdivision({p, m.view(), m.indices, m.top.triangle_edges, bits}, {&pool, max_threads});
    ASSERT_TRUE(same);
    EXPECT_EQ(same->vertices, ref->vertices) << max_threads;
    EXPECT_EQ(same->indices, ref->indices) << max_threads;
  }
  SubdivisionJob grouped{p, m.view(), m.indices, m.top.triangle_edges, bits};
  grouped.order = SubdivIndexOrder::kGroups;
  auto thr = run_subdivision(grouped, {&pool});
  ASSERT_TRUE(thr);
  EXPECT_EQ(thr->vertices, ref->vertices);  // bit-identical
  EXPECT_EQ(thr->edge_strength, ref->edge_strength);
  // Some but not all edges split (the test means something).
  const auto split = std::count_if(ref->edge_strength.begin(), ref->edge_strength.end(),
                                   [](float s) { return s > 0.2F; });
  EXPECT_GT(split, 0);
  EXPECT_LT(static_cast<std::size_t>(split), ref->edge_strength.size());
  // The grouped index output holds the same triangles as a set.
  ASSERT_EQ(thr->draw.index_count, ref->draw.index_count);
  auto triangles = [](const std::vector<std::uint32_t>& idx) {
    std::vector<std::array<std::uint32_t, 3>> t;
    for (std::size_t i = 0; i < idx.size(); i += 3) t.push_back({idx[i], idx[i + 1], idx[i + 2]});
    std::sort(t.begin(), t.end());
    return t;
  };
  EXPECT_EQ(triangles(thr->indices), triangles(ref->indices));
  // The separate kernels (the GPU's shape), scalar and threaded, give the
  // same bits as run_subdivision's fused vertex and edge passes.
  for (core::Executor* ex :
       {static_cast<core::Executor*>(nullptr), static_cast<core::Executor*>(&pool)}) {
    std::vector<std::uint8_t> vertices(ref->vertices.size());
    std::vector<float> strength(ref->edge_strength.size());
    SubdivStrengthJob k1{p, m.view(), vertices, strength};
    ASSERT_TRUE(k1.validate());
    SubdivEdgeJob k2{p, m.view(), strength, bits, vertices};
    ASSERT_TRUE(k1.run({ex}));
    ASSERT_TRUE(k2.validate());
    ASSERT_TRUE(k2.run({ex}));
    EXPECT_EQ(vertices, ref->vertices);
    EXPECT_EQ(strength, ref->edge_strength);
  }
  // 16- and 32-bit edge tables give the same vertices.
  TestMesh w = holed;
  auto wide_top = build_subdiv_topology(w.indices, static_cast<std::uint32_t>(w.extras.size()), 32);
  ASSERT_TRUE(wide_top);
  w.top = std::move(*wide_top);
  const TestMesh& cw = w;
  auto wide = run_subdivision({p, cw.view(), cw.indices, cw.top.triangle_edges, bits});
  ASSERT_TRUE(wide);
  EXPECT_EQ(wide->vertices, ref->vertices);
  EXPECT_EQ(wide->indices, ref->indices);
}

TEST(Subdivision, FullStrengthClosedMeshIsCrackFree) {
  // Every edge split on a closed mesh: each new edge is shared by exactly two
  // output triangles, in opposite directions (a closed, consistently wound result).
  const TestMesh m = sphere(12, 0, 1);
  TestMesh all = m;
  for (auto& x : all.extras) x = pack_subdiv_extras(0.05F, 63);
  const TestMesh& ca = all;
  auto o = run_subdivision({{}, ca.view(), ca.indices, ca.top.triangle_edges});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->indices.size(), 4 * m.indices.size());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> directed;
  for (std::size_t i = 0; i < o->indices.size(); i += 3)
    for (int k = 0; k < 3; ++k)
      directed.emplace_back(o->indices[i + k], o->indices[i + (k + 1) % 3]);
  std::sort(directed.begin(), directed.end());
  EXPECT_EQ(std::adjacent_find(directed.begin(), directed.end()), directed.end());
  for (const auto& [a, b] : directed)
    EXPECT_TRUE(std::binary_search(directed.begin(), directed.end(), std::pair{b, a}));
}

TEST(SubdivExtras, PacksHalfScaleAndStrength) {
  const std::uint32_t x = pack_subdiv_extras(1.0F, 42);
  EXPECT_EQ(x & 0xFFFFU, 0x3C00U);
  EXPECT_EQ((x >> 16) & 63U, 42U);
  EXPECT_EQ(x >> 22, 0U);
  EXPECT_EQ(core::half_to_float(core::float_to_half(0.1F)), 0.0999755859375F);
  EXPECT_EQ(pack_subdiv_extras(0.0F, 99) >> 16, 63U);  // clamped to 6 bits
}

}  // namespace
}  // namespace charkit::deform
