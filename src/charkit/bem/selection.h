// Lazy reading of a selection: decode exactly the payloads a Plan uses (§6
// "未选中的内容不读取、不解压"), each once even when it is shared (one index
// payload in two draws, one mesh replacing two components, one texture in
// two bindings), into what a consumer (runtime, glTF export) needs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/model.h"
#include "charkit/bem/plan.h"
#include "charkit/core/job.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// Where payload bytes come from. read_selection asks for each id at most once.
class PayloadSource {
 public:
  virtual ~PayloadSource() = default;
  virtual core::Result<PayloadData> read(std::uint32_t id) const = 0;
};

/// A PayloadSource over a Package that counts its decodes (for tests and
/// tools: "was anything unselected decoded?").
class PackagePayloadSource final : public PayloadSource {
 public:
  explicit PackagePayloadSource(const Package& package) : package_(package) {}
  core::Result<PayloadData> read(std::uint32_t id) const override;
  /// Number of read() calls so far, and the ids in call order.
  std::size_t decode_count() const { return decoded_.size(); }
  const std::vector<std::uint32_t>& decoded_ids() const { return decoded_; }

 private:
  const Package& package_;
  mutable std::vector<std::uint32_t> decoded_;
};

using SharedPayload = std::shared_ptr<const PayloadData>;

/// One planned mesh, read.
struct SelectedMesh {
  std::uint32_t mesh = 0;  ///< index into Model::meshes (same order as Plan::meshes)
  /// Vertex stream bytes per stream (null for an empty stream, stride 0);
  /// stream s holds vertex_count × stride bytes.
  std::vector<SharedPayload> streams;
  /// The concatenated index stream (§7): selected draws in manifest order,
  /// widened to uint32; segment i of PlannedMesh::segments starts at its `start`.
  std::vector<std::uint32_t> indices;
  /// Morphed positions (x,y,z per vertex, §10 position = base + Σ deltas)
  /// when the mesh has active channels; empty otherwise (use the stream's
  /// position attribute as is).
  std::vector<float> positions;
  /// The decoded frame payloads of the mesh's planned channels (by payload
  /// id; every frame with PlanOptions::all_frames), checked against the
  /// mesh's vertex count.
  std::map<std::uint32_t, SharedPayload> frame_payloads;
};

struct SelectedTexture {
  std::uint32_t texture = 0;  ///< index into Model::textures
  SharedPayload data;         ///< the texture payload (full mip chain, §8)
};

struct Selection {
  std::vector<SelectedMesh> meshes;       ///< Plan::meshes order
  std::vector<SelectedTexture> textures;  ///< every bound texture once, ascending
  /// Payload ids decoded, in decode order (each once; equals Plan::payloads as a set).
  std::vector<std::uint32_t> decoded;
};

struct SelectionOptions {
  /// How morph evaluation may spend threads (core/job.h; by default the
  /// calling thread only).
  core::RunOptions morph;
  /// Read texture payloads too (an exporter wants them; a geometry-only
  /// consumer may skip them).
  bool read_textures = true;
};

/// Decode what the plan uses. Every payload is checked before use (sizes
/// against vertex_count × stride and count × index_size, indices below
/// vertex_count, delta payload layout and vertex indices), so a package that
/// skipped validation gives an error, never an out-of-range access.
/// Error codes: BEM_SELECT_PAYLOAD (decode failed), BEM_SELECT_SIZE,
/// BEM_SELECT_INDEX, BEM_SELECT_POSITION (deformed mesh without float xyz
/// positions), and the deform::parse_sparse_deltas codes.
core::Result<Selection> read_selection(const Model& model, const Plan& plan,
                                       const PayloadSource& source,
                                       const SelectionOptions& options = {});

}  // namespace charkit::bem
