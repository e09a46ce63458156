// Adaptive Loop-style subdivision with GPU-style index generation (the
// character-rendering frame analysis §6; docs/deform/subdivision.md). Three
// kernels, each a job (core/job.h: fill the spans, validate(), run()), as
// the frame analysis separates them, and SubdivisionJob running all three:
//
//  1. SubdivStrengthJob: per vertex the allowed strength (6-bit strength and
//     distance control); the original vertices copied into the 48-byte output
//     layout; per edge its strength (from its endpoints' strengths) and the
//     normal and tangent of its new vertex.
//  2. SubdivEdgeJob: per edge the new vertex's position: the midpoint, or
//     with full adjacency and smoothing the Loop candidate
//     3/8·(a+b) + 1/8·(c+d), optionally constrained to a direction, then
//     interpolated from the midpoint towards it by the edge strength.
//  3. SubdivIndexJob: per triangle with k split edges, 1 + k triangles,
//     described by a VkDrawIndexedIndirectCommand; in input triangle order,
//     or in the GPU's two-level allocation (64-triangle groups, one atomic
//     add per group).
//
// Input vertices are the 40-byte layout of the morph blend (position,
// normal, tangent xyzw: docs/deform/morph40.md), so a morphed vertex array
// feeds subdivision directly. Output vertices are 48 bytes (3 float4):
//   bytes  0..15  position xyz, w = the strength (vertex or edge)
//   bytes 16..31  normal xyz, w = 0
//   bytes 32..47  tangent xyzw
// Vertex i < V of the output is input vertex i; vertex V + e is edge e's
// new vertex (written for every edge; only split edges' are referenced).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "charkit/core/job.h"
#include "charkit/core/result.h"
#include "charkit/gpu/context.h"

namespace charkit::deform {

inline constexpr std::size_t kSubdivInVertexBytes = 40;
inline constexpr std::size_t kSubdivOutVertexBytes = 48;
/// Triangles per allocation group (the GPU workgroup size of kernel 3).
inline constexpr std::uint32_t kSubdivGroupSize = 64;

/// The per-vertex extras word: bits 0..15 the geometry scale as a half
/// float, bits 16..21 the 6-bit strength (0..63), bits 22..31 zero.
std::uint32_t pack_subdiv_extras(float geometry_scale, std::uint32_t strength6);

/// How an edge's strength follows from its endpoints' strengths.
enum class EdgeStrengthRule : std::uint8_t {
  kAverage,  ///< (s_a + s_b) / 2: the default
  kMinimum,  ///< min(s_a, s_b): only where both ends allow it
  kMaximum,  ///< max(s_a, s_b): wherever one end allows it
};

struct SubdivParams {
  /// Distance control on: the distance weight from `reference`; off: 1.
  bool distance_control = false;
  std::array<float, 3> reference{};
  float projection_ratio = 1978.1837F;
  float start_threshold = 0.7F;
  float slope = 5.0F;
  float branch_multiplier = 1.0F;  ///< 1 or 3
  EdgeStrengthRule edge_rule = EdgeStrengthRule::kAverage;
  /// An edge is split when its strength is above this (0: any strength).
  float split_threshold = 0.0F;
  /// The Loop candidate where the edge has full adjacency; false: midpoints.
  bool smooth = true;
};

/// The edge table the kernels read. index_bits 16 (the layout of the frame
/// analysis, at most 65535 vertices): two words per edge, a | b << 16 and
/// c | d << 16, 0xFFFF meaning "no such vertex". index_bits 32: four words
/// per edge a, b, c, d, 0xFFFFFFFF for none. a, b are the endpoints; c, d the
/// opposite corners of the edge's two triangles, both given only when exactly
/// two triangles share the edge (full adjacency). triangle_edges holds, per
/// triangle, the edges of its corners (0,1), (1,2) and (2,0).
struct SubdivTopology {
  std::uint32_t vertex_count = 0;
  std::uint32_t edge_count = 0;
  std::uint32_t triangle_count = 0;
  unsigned index_bits = 16;
  std::vector<std::uint32_t> edges;
  std::vector<std::uint32_t> triangle_edges;
};

/// Builds the edge table of a triangle list. index_bits 0 picks 16 when
/// vertex_count ≤ 65535, else 32. `weld` (empty, or one entry per vertex:
/// the vertex standing for all at its position) makes adjacency follow
/// positions: an edge along a UV or normal seam (two vertex pairs at the same
/// two positions) stays two edges, each with its own vertices, but both get
/// full adjacency across the seam, so both compute the same point and the
/// surface is smoothed across it. Errors: DEFORM_SUBDIV_SIZE (indices not a
/// multiple of 3, more than 2^31 edges, 16 bits asked for too many vertices,
/// a weld map of another size), DEFORM_SUBDIV_VERTEX (an index or weld entry
/// ≥ vertex_count; location offset = its byte position). Edges are numbered
/// by their smaller welded endpoint, then the larger, then the vertex pair:
/// the same mesh gives the same table.
core::Result<SubdivTopology> build_subdiv_topology(std::span<const std::uint32_t> indices,
                                                   std::uint32_t vertex_count,
                                                   unsigned index_bits = 0,
                                                   std::span<const std::uint32_t> weld = {});

/// One edge's vertices (a, b endpoints; c, d opposite corners or kNone).
struct SubdivEdge {
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  std::uint32_t a = 0, b = 0, c = kNone, d = kNone;
};

/// The mesh every kernel reads.
struct SubdivMeshView {
  std::uint32_t vertex_count = 0;
  std::span<const std::uint8_t> vertices;  ///< vertex_count × 40 bytes
  std::span<const std::uint32_t> extras;   ///< vertex_count words (pack_subdiv_extras)
  unsigned index_bits = 16;
  std::uint32_t edge_count = 0;
  std::span<const std::uint32_t> edges;  ///< edge_count × 2 (16 bits) or × 4 (32 bits)

  /// Edge e unpacked (e < edge_count; no check).
  SubdivEdge edge(std::uint32_t e) const {
    return index_bits == 16 ? edge_as<16>(e) : edge_as<32>(e);
  }
  /// Edge e of a table of kBits-bit indices (index_bits known to the caller).
  template <unsigned kBits>
  SubdivEdge edge_as(std::size_t e) const {
    if constexpr (kBits == 16) {
      const std::uint32_t ab = edges[2 * e];
      const std::uint32_t cd = edges[2 * e + 1];
      return {ab & 0xFFFFU, ab >> 16, (cd & 0xFFFFU) == 0xFFFFU ? SubdivEdge::kNone : cd & 0xFFFFU,
              (cd >> 16) == 0xFFFFU ? SubdivEdge::kNone : cd >> 16};
    } else {
      const std::uint32_t* w = edges.data() + 4 * e;
      return {w[0], w[1], w[2], w[3]};
    }
  }
  /// Sizes, index_bits, endpoints and opposite corners < vertex_count,
  /// finite vertex values, extras with zero reserved bits and a finite,
  /// non-negative geometry scale. Codes DEFORM_SUBDIV_SIZE, _VERTEX, _VALUE.
  core::Status validate() const;
};

/// Kernel 1.
struct SubdivStrengthJob {
  SubdivParams params;
  SubdivMeshView mesh;
  std::span<std::uint8_t> out_vertices;  ///< (V + E) × 48 bytes
  std::span<float> edge_strength;        ///< E floats

  /// The mesh's checks, the parameters' (DEFORM_SUBDIV_PARAM: branch not 1
  /// or 3, a non-finite or negative value) and the output sizes.
  core::Status validate() const;
  /// Vertices, then edges, each split over the executor when there is one
  /// (the same bits either way). Requires a validated job; never fails then.
  core::Status run(const core::RunOptions& options = {}) const;
};

/// Kernel 2.
struct SubdivEdgeJob {
  SubdivParams params;  ///< smooth is read
  SubdivMeshView mesh;
  std::span<const float> edge_strength;  ///< E floats, from kernel 1
  /// Edge e constrained when bit e % 32 of word e / 32 is set; empty: none.
  /// A constrained edge's displacement (candidate − midpoint) is projected
  /// onto the normalised sum of its endpoints' normals before the strength
  /// interpolation (docs/deform/subdivision.md).
  std::span<const std::uint32_t> constrained;
  std::span<std::uint8_t> out_vertices;  ///< positions of V + e written

  core::Status validate() const;
  /// Edges split over the executor when there is one (the same bits).
  /// Requires a validated job; never fails then.
  core::Status run(const core::RunOptions& options = {}) const;
};

/// VkDrawIndexedIndirectCommand, byte for byte.
struct DrawIndexedIndirect {
  std::uint32_t index_count = 0;
  std::uint32_t instance_count = 0;
  std::uint32_t first_index = 0;
  std::int32_t vertex_offset = 0;
  std::uint32_t first_instance = 0;
};
static_assert(sizeof(DrawIndexedIndirect) == 20);

/// The order of kernel 3's output triangles.
enum class SubdivIndexOrder : std::uint8_t {
  /// Input triangle order, each triangle's 1 + k triangles together: the
  /// reference, the same with or without threads (a threaded run counts each
  /// chunk's output first, then writes at the prefix sums). What a caller
  /// splitting the output by input triangle ranges needs.
  kTriangles,
  /// The GPU's two-level allocation: groups of 64 triangles sum their
  /// extra counts, take their output range with one atomic add on a shared
  /// counter, and write at per-triangle offsets inside it. The same
  /// triangles; with threads the groups' order depends on scheduling.
  kGroups,
};

/// Kernel 3.
struct SubdivIndexJob {
  SubdivMeshView mesh;  ///< vertex and edge counts, edge table (new vertex of edge e: V + e)
  std::span<const std::uint32_t> indices;         ///< 3 per triangle
  std::span<const std::uint32_t> triangle_edges;  ///< 3 per triangle
  std::span<const float> edge_strength;           ///< E floats
  float split_threshold = 0.0F;
  /// At least 12 × triangles (the worst case: every triangle in four).
  std::span<std::uint32_t> out_indices{};
  DrawIndexedIndirect* draw = nullptr;  ///< written: index_count, 1, 0, 0, 0
  SubdivIndexOrder order = SubdivIndexOrder::kTriangles;

  /// Sizes, indices < V, edge ids < E and each naming the edge between its
  /// two corners of the mesh's edge table (DEFORM_SUBDIV_SIZE, _VERTEX,
  /// _EDGE), a finite threshold (DEFORM_SUBDIV_PARAM).
  core::Status validate() const;
  /// Each triangle's 1 + k triangles in the fixed pattern of
  /// docs/deform/subdivision.md, in `order`. A threaded run in triangle
  /// order allocates one count per chunk. Requires a validated job; never
  /// fails then.
  core::Status run(const core::RunOptions& options = {}) const;
};

/// Caller-owned outputs, sized as the jobs want them.
struct SubdivBuffers {
  std::span<std::uint8_t> vertices;     ///< (V + E) × 48 bytes
  std::span<float> edge_strength;       ///< E
  std::span<std::uint32_t> indices;     ///< at least 12 × triangles
  DrawIndexedIndirect* draw = nullptr;  ///< its index_count: how many indices were written
};

/// The three kernels in order over one mesh.
struct SubdivisionJob {
  SubdivParams params;
  SubdivMeshView mesh;
  std::span<const std::uint32_t> indices;         ///< 3 per triangle
  std::span<const std::uint32_t> triangle_edges;  ///< 3 per triangle (SubdivTopology)
  std::span<const std::uint32_t> constrained{};   ///< as in SubdivEdgeJob
  SubdivBuffers out{};
  SubdivIndexOrder order = SubdivIndexOrder::kTriangles;

  /// The checks of the three jobs on these inputs and outputs.
  core::Status validate() const;
  /// Kernel 1's vertex part, kernels 1 and 2's edge parts fused into one
  /// pass (the same bits as the two kernels one after the other: tested),
  /// kernel 3; each split over the executor when there is one. Requires a
  /// validated job (validate once, run as often as the inputs change in
  /// value only); never fails then. Allocates nothing, except kernel 3's
  /// per-chunk counts when threaded in triangle order.
  core::Status run(const core::RunOptions& options = {}) const;
  /// The kernels on the GPU backend (shaders/subdiv_*.comp), one dispatch
  /// each with barriers between. Kernel 3 runs there in group order; in
  /// triangle order it runs on the calling thread on the GPU's strengths
  /// (the GPU's order does not keep a triangle range together). Validates
  /// first. Vertices and strengths equal the CPU's within the device's
  /// division and square-root precision (bit-equal on lavapipe in the
  /// tests); the triangles are the reference's for the strengths the GPU
  /// computed. Output records and triangles are chunked to the device's
  /// storage-buffer range and workgroup count; errors also GPU_LIMIT (an
  /// array read at any index: input vertices, extras, edge strengths,
  /// bitmap, past that range), GPU_UNAVAILABLE, GPU_VULKAN.
  core::Status run_gpu(gpu::Context& context) const;
  /// Kernel 3 of this job: on out.edge_strength, into out.indices.
  SubdivIndexJob index_job() const;
};

/// The outputs of run_subdivision, owned.
struct SubdivOutput {
  std::vector<std::uint8_t> vertices;  ///< (V + E) × 48 bytes
  std::vector<float> edge_strength;    ///< E
  std::vector<std::uint32_t> indices;  ///< draw.index_count indices
  DrawIndexedIndirect draw;
};
/// Allocates the outputs, validates and runs the job; `indices` trimmed to
/// the count. The job's `out` must be empty (DEFORM_SUBDIV_SIZE otherwise:
/// this function owns the outputs).
core::Result<SubdivOutput> run_subdivision(const SubdivisionJob& job,
                                           const core::RunOptions& options = {});

/// Which triangles split and how: the number of split edges of triangle t.
/// The output index count of a job is 3 × Σ (1 + k_t).
std::uint32_t subdiv_split_count(const SubdivIndexJob& job, std::uint32_t triangle);

}  // namespace charkit::deform
