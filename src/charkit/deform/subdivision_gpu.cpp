// The subdivision kernels on the GPU backend (docs/deform/subdivision.md,
// "Devices"): shaders/subdiv_strength.comp, subdiv_edges.comp and
// subdiv_indices.comp, each dispatched once per chunk of one binding's range.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "charkit/deform/subdivision.h"
#include "charkit/gpu/error_codes.h"

#include "subdiv_edges.spv.h"
#include "subdiv_indices.spv.h"
#include "subdiv_strength.spv.h"

namespace charkit::deform {

namespace {

template <typename T>
void push(std::vector<std::uint8_t>& p, T v) {
  const auto* b = reinterpret_cast<const std::uint8_t*>(&v);
  p.insert(p.end(), b, b + sizeof v);
}

}  // namespace

core::Status SubdivisionJob::run_gpu(gpu::Context& context) const {
  if (auto st = validate(); !st) return st;
  // Kernel 3 on the GPU gives group order; triangle order runs it here.
  const bool kernel3 = order == SubdivIndexOrder::kGroups;
  const std::uint64_t V = mesh.vertex_count;
  const std::uint64_t E = mesh.edge_count;
  const std::uint64_t T = indices.size() / 3;
  const std::uint64_t limit = context.max_buffer_bytes();
  // Arrays read at any index stay whole: the input vertices and extras (an
  // edge reads both endpoints), the edge strengths (a triangle reads its three
  // edges') and the constraint bitmap.
  const std::pair<const char*, std::uint64_t> whole[] = {
      {"input vertex array", mesh.vertices.size()},
      {"vertex extras array", mesh.extras.size() * 4},
      {"edge-strength array", E * 4},
      {"constraint bitmap", constrained.size() * 4}};
  for (const auto& [what, bytes] : whole)
    if (bytes > limit)
      return core::make_error(
          gpu::codes::GPU_LIMIT,
          std::string("the ") + what + " (" + std::to_string(bytes) +
              " bytes) is read at any index and cannot be chunked past the "
              "device's " +
              std::to_string(limit) +
              "-byte storage-buffer range; subdivide this mesh on --device cpu");
  // Arrays read and written in order are chunked: the output records
  // (vertices then edges, 48 bytes each) with the edge table's matching
  // slice, and the triangles with their output indices (48 bytes each).
  const std::uint64_t max_items = std::uint64_t{context.device().max_workgroup_count[0]} * 64;
  const std::uint64_t per_chunk = std::min(limit / 48, max_items);
  if (per_chunk == 0)
    return core::make_error(gpu::codes::GPU_LIMIT, "the device's storage-buffer range (" +
                                                       std::to_string(limit) +
                                                       " bytes) holds no 48-byte output record");
  auto p1 = context.create_pipeline(kSubdiv_strengthSpirv, 5, 56);
  if (!p1) return std::move(p1).error();
  auto p2 = context.create_pipeline(kSubdiv_edgesSpirv, 5, 24);
  if (!p2) return std::move(p2).error();
  auto p3 = context.create_pipeline(kSubdiv_indicesSpirv, 5, 12);
  if (!p3) return std::move(p3).error();
  gpu::Scratch b(context);
  const std::uint32_t none = 0;
  auto in_vertices = b.buffer(mesh.vertices.data(), mesh.vertices.size(), mesh.vertices.size());
  if (!in_vertices) return std::move(in_vertices).error();
  auto extras = b.buffer(mesh.extras.data(), mesh.extras.size() * 4, mesh.extras.size() * 4);
  if (!extras) return std::move(extras).error();
  auto strength = b.buffer(nullptr, 0, E * 4);
  if (!strength) return std::move(strength).error();
  auto bits = constrained.empty()
                  ? b.buffer(&none, 4, 4)
                  : b.buffer(constrained.data(), constrained.size() * 4, constrained.size() * 4);
  if (!bits) return std::move(bits).error();

  std::vector<gpu::Dispatch> d;
  struct Piece {
    gpu::BufferId buffer;
    std::uint64_t first, count;  // records or triangles
  };
  std::vector<Piece> out_pieces, index_pieces;
  const std::uint64_t edge_words = mesh.index_bits == 16 ? 2 : 4;
  for (std::uint64_t r0 = 0; r0 < V + E; r0 += per_chunk) {
    const std::uint64_t r1 = std::min(r0 + per_chunk, V + E);
    const std::uint64_t e0 = r0 > V ? r0 - V : 0;
    const std::uint64_t e1 = r1 > V ? r1 - V : 0;
    auto chunk = b.buffer(nullptr, 0, (r1 - r0) * 48);
    if (!chunk) return std::move(chunk).error();
    out_pieces.push_back({*chunk, r0, r1 - r0});
    const std::uint32_t* words = mesh.edges.data() + e0 * edge_words;
    auto edges = b.buffer(words, (e1 - e0) * edge_words * 4, (e1 - e0) * edge_words * 4);
    if (!edges) return std::move(edges).error();
    gpu::Dispatch k1;
    k1.pipeline = *p1;
    k1.buffers = {*in_vertices, *extras, *edges, *chunk, *strength};
    for (float f : params.reference) push(k1.push, f);
    push(k1.push, params.distance_control ? 1.0F : 0.0F);
    push(k1.push, params.projection_ratio);
    push(k1.push, params.start_threshold);
    push(k1.push, params.slope);
    push(k1.push, params.branch_multiplier);
    push(k1.push, static_cast<std::uint32_t>(V));
    push(k1.push, static_cast<std::uint32_t>(e0));
    push(k1.push, static_cast<std::uint32_t>(mesh.index_bits));
    push(k1.push, static_cast<std::uint32_t>(params.edge_rule));
    push(k1.push, static_cast<std::uint32_t>(r0));
    push(k1.push, static_cast<std::uint32_t>(r1));
    k1.groups = static_cast<std::uint32_t>((r1 - r0 + 63) / 64);
    d.push_back(std::move(k1));
    if (e1 == e0) continue;
    gpu::Dispatch k2;
    k2.pipeline = *p2;
    k2.buffers = {*in_vertices, *edges, *strength, *bits, *chunk};
    push(k2.push, static_cast<std::uint32_t>(e0));
    push(k2.push, static_cast<std::uint32_t>(e1 - e0));
    push(k2.push, static_cast<std::uint32_t>(mesh.index_bits));
    push(k2.push, (params.smooth ? 1U : 0U) | (constrained.empty() ? 0U : 2U));
    push(k2.push, static_cast<std::uint32_t>(V + e0 - r0));  // the chunk's first edge record
    push(k2.push, std::uint32_t{0});
    k2.groups = static_cast<std::uint32_t>((e1 - e0 + 63) / 64);
    d.push_back(std::move(k2));
  }
  std::vector<gpu::BufferId> draws;
  if (kernel3) {
    for (std::uint64_t t0 = 0; t0 < T; t0 += per_chunk) {
      const std::uint64_t n = std::min(per_chunk, T - t0);
      auto tri = b.buffer(indices.data() + 3 * t0, n * 12, n * 12);
      if (!tri) return std::move(tri).error();
      auto tri_edges = b.buffer(triangle_edges.data() + 3 * t0, n * 12, n * 12);
      if (!tri_edges) return std::move(tri_edges).error();
      auto oi = b.buffer(nullptr, 0, n * 48);
      if (!oi) return std::move(oi).error();
      index_pieces.push_back({*oi, t0, n});
      const DrawIndexedIndirect initial{0, 1, 0, 0, 0};
      auto dr = b.buffer(&initial, sizeof initial, sizeof initial);
      if (!dr) return std::move(dr).error();
      draws.push_back(*dr);
      gpu::Dispatch k3;
      k3.pipeline = *p3;
      k3.buffers = {*tri, *tri_edges, *strength, *oi, *dr};
      push(k3.push, static_cast<std::uint32_t>(V));
      push(k3.push, static_cast<std::uint32_t>(n));
      push(k3.push, params.split_threshold);
      k3.groups = static_cast<std::uint32_t>((n + 63) / 64);
      d.push_back(std::move(k3));
    }
  }
  if (auto st = context.run(d); !st) return st;
  for (const Piece& piece : out_pieces)
    std::memcpy(out.vertices.data() + piece.first * 48, context.map(piece.buffer).data(),
                piece.count * 48);
  std::memcpy(out.edge_strength.data(), context.map(*strength).data(), E * 4);
  if (kernel3) {
    // Each chunk's triangles after the previous chunk's: the draw command
    // of the whole output.
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < index_pieces.size(); ++i) {
      DrawIndexedIndirect cmd;
      std::memcpy(&cmd, context.map(draws[i]).data(), sizeof cmd);
      if (cmd.index_count > index_pieces[i].count * 12 ||
          total + cmd.index_count > out.indices.size())
        return core::make_error(gpu::codes::GPU_VULKAN,
                                "the index kernel reported " + std::to_string(cmd.index_count) +
                                    " indices for " + std::to_string(index_pieces[i].count) +
                                    " triangles");
      std::memcpy(out.indices.data() + total, context.map(index_pieces[i].buffer).data(),
                  std::size_t{cmd.index_count} * 4);
      total += cmd.index_count;
    }
    *out.draw = DrawIndexedIndirect{static_cast<std::uint32_t>(total), 1, 0, 0, 0};
    return core::Ok{};
  }
  return index_job().run();
}

}  // namespace charkit::deform
