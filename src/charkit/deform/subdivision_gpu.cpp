// The subdivision kernels on the GPU backend (docs/deform/subdivision.md,
// "Devices"): shaders/subdiv_strength.comp, subdiv_edges.comp and
// subdiv_indices.comp, one dispatch each.
#include <algorithm>
#include <cstring>
#include <vector>

#include "charkit/deform/subdivision.h"
#include "charkit/gpu/error_codes.h"

#if CHARKIT_WITH_VULKAN
#include "subdiv_edges.spv.h"
#include "subdiv_indices.spv.h"
#include "subdiv_strength.spv.h"
#endif

namespace charkit::deform {

#if CHARKIT_WITH_VULKAN
namespace {

/// Buffers a run creates, freed on every way out.
class Buffers {
 public:
  explicit Buffers(gpu::Context& c) : c_(c) {}
  ~Buffers() {
    for (gpu::BufferId b : ids_) c_.free_buffer(b);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  /// A buffer holding `bytes` (zeros past them, at least 4 bytes).
  core::Result<gpu::BufferId> make(const void* data, std::size_t bytes, std::size_t size) {
    auto b = c_.create_buffer(std::max<std::size_t>(size, 4));
    if (!b) return std::move(b).error();
    ids_.push_back(*b);
    std::span<std::uint8_t> m = c_.map(*b);
    std::fill(m.begin(), m.end(), std::uint8_t{0});
    if (bytes > 0) std::memcpy(m.data(), data, bytes);
    return *b;
  }

 private:
  gpu::Context& c_;
  std::vector<gpu::BufferId> ids_;
};

template <typename T>
void push(std::vector<std::uint8_t>& p, T v) {
  const auto* b = reinterpret_cast<const std::uint8_t*>(&v);
  p.insert(p.end(), b, b + sizeof v);
}

}  // namespace
#endif

core::Status run_subdivision_gpu(gpu::Context& context, const SubdivParams& params,
                                 const SubdivMeshView& mesh, std::span<const std::uint32_t> indices,
                                 std::span<const std::uint32_t> triangle_edges,
                                 std::span<const std::uint32_t> constrained,
                                 const SubdivBuffers& out, bool kernel3) {
#if !CHARKIT_WITH_VULKAN
  (void)context, (void)params, (void)mesh, (void)indices, (void)triangle_edges, (void)constrained,
      (void)out, (void)kernel3;
  return core::make_error(gpu::codes::GPU_UNAVAILABLE.str(),
                          "this charkit was built without the Vulkan backend");
#else
  if (auto st = validate_subdivision(params, mesh, indices, triangle_edges, constrained, out); !st)
    return st;
  const std::uint32_t V = mesh.vertex_count;
  const std::uint32_t E = mesh.edge_count;
  const auto T = static_cast<std::uint32_t>(indices.size() / 3);
  const std::uint64_t max_items = std::uint64_t{context.device().max_workgroup_count[0]} * 64;
  if (std::max({std::uint64_t{V}, std::uint64_t{E}, std::uint64_t{T}}) > max_items)
    return core::make_error(gpu::codes::GPU_LIMIT.str(),
                            "the mesh needs more than " + std::to_string(max_items) +
                                " invocations in one dispatch; subdivide it on --device cpu");
  auto p1 = context.create_pipeline(kSubdiv_strengthSpirv, 5, 48);
  if (!p1) return std::move(p1).error();
  auto p2 = context.create_pipeline(kSubdiv_edgesSpirv, 5, 16);
  if (!p2) return std::move(p2).error();
  auto p3 = context.create_pipeline(kSubdiv_indicesSpirv, 5, 12);
  if (!p3) return std::move(p3).error();
  Buffers b(context);
  const std::uint32_t none = 0;
  auto in_vertices = b.make(mesh.vertices.data(), mesh.vertices.size(), mesh.vertices.size());
  if (!in_vertices) return std::move(in_vertices).error();
  auto extras = b.make(mesh.extras.data(), mesh.extras.size() * 4, mesh.extras.size() * 4);
  if (!extras) return std::move(extras).error();
  auto edges = b.make(mesh.edges.data(), mesh.edges.size() * 4, mesh.edges.size() * 4);
  if (!edges) return std::move(edges).error();
  auto out_vertices = b.make(nullptr, 0, out.vertices.size());
  if (!out_vertices) return std::move(out_vertices).error();
  auto strength = b.make(nullptr, 0, std::size_t{E} * 4);
  if (!strength) return std::move(strength).error();
  auto bits = constrained.empty()
                  ? b.make(&none, 4, 4)
                  : b.make(constrained.data(), constrained.size() * 4, constrained.size() * 4);
  if (!bits) return std::move(bits).error();

  std::vector<gpu::Dispatch> d(kernel3 ? 3 : 2);
  d[0].pipeline = *p1;
  d[0].buffers = {*in_vertices, *extras, *edges, *out_vertices, *strength};
  for (float f : params.reference) push(d[0].push, f);
  push(d[0].push, params.distance_control ? 1.0F : 0.0F);
  push(d[0].push, params.projection_ratio);
  push(d[0].push, params.start_threshold);
  push(d[0].push, params.slope);
  push(d[0].push, params.branch_multiplier);
  push(d[0].push, V);
  push(d[0].push, E);
  push(d[0].push, static_cast<std::uint32_t>(mesh.index_bits));
  push(d[0].push, static_cast<std::uint32_t>(params.edge_rule));
  d[0].groups = (std::max(V, E) + 63) / 64;
  d[1].pipeline = *p2;
  d[1].buffers = {*in_vertices, *edges, *strength, *bits, *out_vertices};
  push(d[1].push, V);
  push(d[1].push, E);
  push(d[1].push, static_cast<std::uint32_t>(mesh.index_bits));
  push(d[1].push, (params.smooth ? 1U : 0U) | (constrained.empty() ? 0U : 2U));
  d[1].groups = (E + 63) / 64;
  gpu::BufferId out_idx, draw;
  if (kernel3) {
    auto tri = b.make(indices.data(), indices.size() * 4, indices.size() * 4);
    if (!tri) return std::move(tri).error();
    auto tri_edges =
        b.make(triangle_edges.data(), triangle_edges.size() * 4, triangle_edges.size() * 4);
    if (!tri_edges) return std::move(tri_edges).error();
    auto oi = b.make(nullptr, 0, std::size_t{T} * 12 * 4);
    if (!oi) return std::move(oi).error();
    out_idx = *oi;
    const DrawIndexedIndirect initial{0, 1, 0, 0, 0};
    auto dr = b.make(&initial, sizeof initial, sizeof initial);
    if (!dr) return std::move(dr).error();
    draw = *dr;
    d[2].pipeline = *p3;
    d[2].buffers = {*tri, *tri_edges, *strength, out_idx, draw};
    push(d[2].push, V);
    push(d[2].push, T);
    push(d[2].push, params.split_threshold);
    d[2].groups = (T + 63) / 64;
  }
  if (auto st = context.run(d); !st) return st;
  std::memcpy(out.vertices.data(), context.map(*out_vertices).data(), out.vertices.size());
  std::memcpy(out.edge_strength.data(), context.map(*strength).data(), std::size_t{E} * 4);
  if (kernel3) {
    DrawIndexedIndirect cmd;
    std::memcpy(&cmd, context.map(draw).data(), sizeof cmd);
    if (cmd.index_count > out.indices.size())
      return core::make_error(gpu::codes::GPU_VULKAN.str(),
                              "the index kernel reported " + std::to_string(cmd.index_count) +
                                  " indices for room of " + std::to_string(out.indices.size()));
    std::memcpy(out.indices.data(), context.map(out_idx).data(), std::size_t{cmd.index_count} * 4);
    *out.draw = cmd;
  }
  return core::Ok{};
#endif
}

}  // namespace charkit::deform
