// libFuzzer target: the subdivision jobs' validators (deform/subdivision.h)
// on arbitrary meshes, edge tables and parameters. The bytes give the
// sizes, flags, parameters and arrays; the edge table is either built by
// build_subdiv_topology or taken raw from the bytes. Whatever validate()
// accepts must run without a fault, write only inside its outputs, emit at
// most 12 indices per triangle, all below V + E; the grouped index output
// must hold the reference's triangles, and the fused vertex and edge passes
// the separate kernels' bits.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "charkit/core/parallel.h"
#include "charkit/deform/subdivision.h"

using namespace charkit;

namespace {

struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  template <typename T>
  T get() {
    T v{};
    const std::size_t k = std::min(n, sizeof(T));
    std::memcpy(&v, p, k);
    p += k;
    n -= k;
    return v;
  }
};

std::vector<std::array<std::uint32_t, 3>> sorted_triangles(const std::vector<std::uint32_t>& idx) {
  std::vector<std::array<std::uint32_t, 3>> t;
  for (std::size_t i = 0; i + 2 < idx.size(); i += 3) t.push_back({idx[i], idx[i + 1], idx[i + 2]});
  std::sort(t.begin(), t.end());
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader r{data, size};
  const auto flags = r.get<std::uint16_t>();
  const std::uint32_t V = r.get<std::uint8_t>() % 48;
  const std::uint32_t T = r.get<std::uint8_t>() % 48;
  deform::SubdivParams p;
  p.smooth = (flags & 1U) != 0;
  p.distance_control = (flags & 2U) != 0;
  p.branch_multiplier = (flags & 4U) != 0 ? 3.0F : ((flags & 8U) != 0 ? 2.0F : 1.0F);
  p.edge_rule = static_cast<deform::EdgeStrengthRule>((flags >> 4) % 3);
  const bool wide = (flags & 64U) != 0;
  const bool raw_edges = (flags & 128U) != 0;
  const bool constrain = (flags & 256U) != 0;
  if ((flags & 512U) != 0) {
    p.projection_ratio = r.get<float>();
    p.start_threshold = r.get<float>();
    p.slope = r.get<float>();
    p.split_threshold = r.get<float>();
    for (float& x : p.reference) x = r.get<float>();
  }
  std::vector<std::uint8_t> vertices(std::size_t{V} * deform::kSubdivInVertexBytes);
  for (auto& b : vertices) b = r.get<std::uint8_t>();
  std::vector<std::uint32_t> extras(V);
  for (auto& x : extras) x = r.get<std::uint32_t>() & ((flags & 1024U) != 0 ? ~0U : 0x003FFFFFU);
  std::vector<std::uint32_t> indices(std::size_t{T} * 3);
  for (auto& i : indices) i = r.get<std::uint8_t>() % (V + 2);
  deform::SubdivTopology top;
  if (raw_edges) {
    top.vertex_count = V;
    top.index_bits = wide ? 32 : 16;
    top.edge_count = r.get<std::uint8_t>() % 64;
    top.edges.resize(std::size_t{top.edge_count} * (wide ? 4 : 2));
    for (auto& w : top.edges) w = r.get<std::uint32_t>();
    top.triangle_edges.resize(indices.size());
    for (auto& e : top.triangle_edges) e = r.get<std::uint8_t>() % (top.edge_count + 1);
  } else {
    std::vector<std::uint32_t> weld;
    if ((flags & 2048U) != 0)
      for (std::uint32_t v = 0; v < V; ++v) weld.push_back(r.get<std::uint8_t>() % (v + 1));
    auto built = deform::build_subdiv_topology(indices, V, wide ? 32 : 0, weld);
    if (!built) {
      if (built.error().code.empty()) __builtin_trap();
      return 0;
    }
    top = std::move(*built);
  }
  std::vector<std::uint32_t> bits;
  if (constrain)
    for (std::size_t i = 0; i < (std::size_t{top.edge_count} + 31) / 32; ++i)
      bits.push_back(r.get<std::uint32_t>());
  const deform::SubdivMeshView view{V, vertices, extras, top.index_bits, top.edge_count, top.edges};
  auto ref = deform::run_subdivision({p, view, indices, top.triangle_edges, bits});
  if (!ref) {
    if (ref.error().code.empty()) __builtin_trap();
    return 0;
  }
  const std::size_t limit = std::size_t{V} + top.edge_count;
  if (ref->indices.size() > 12 * std::size_t{T} || ref->indices.size() % 3 != 0) __builtin_trap();
  for (std::uint32_t i : ref->indices)
    if (i >= limit) __builtin_trap();
  deform::SubdivisionJob grouped{p, view, indices, top.triangle_edges, bits};
  grouped.order = deform::SubdivIndexOrder::kGroups;
  auto thr = deform::run_subdivision(grouped, {&core::serial_executor()});
  if (!thr) __builtin_trap();
  // Bytes, not floats: the threaded kernels must give the same bits.
  if (thr->vertices != ref->vertices) __builtin_trap();
  if (sorted_triangles(thr->indices) != sorted_triangles(ref->indices)) __builtin_trap();
  // The separate kernels (the reference, the GPU's shape) give the bits of
  // the fused passes (SSE lanes included).
  std::vector<std::uint8_t> sep(ref->vertices.size());
  std::vector<float> strength(ref->edge_strength.size());
  const deform::SubdivStrengthJob k1{p, view, sep, strength};
  if (!k1.validate() || !k1.run()) __builtin_trap();
  const deform::SubdivEdgeJob k2{p, view, strength, bits, sep};
  if (!k2.validate()) return 0;  // a non-finite strength cannot come from valid input
  if (!k2.run()) __builtin_trap();
  if (sep != ref->vertices) __builtin_trap();
  return 0;
}
