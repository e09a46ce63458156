// The selection plan: what the runtime builds for one normalised selection
// (§5–§7, §9, §10). Computing a plan reads no payload; it says which payloads
// the selection uses so that a reader (selection.h) decodes only those (§6
// "运行时只读取当前选择用到的 payload").
//
// Every index the plan stores was range-checked against the Model, so a
// consumer can index Model vectors with it directly; make_plan fails instead
// of indexing out of range on a model that skipped validation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/bem/settings.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// 1.4: restrict the plan to the components of one resource, for one
/// platform. Both empty: the whole package (the only choice before 1.4).
struct PlanOptions {
  std::string resource;  ///< Resource::id
  std::string platform;  ///< e.g. "windows-x64", "android-arm64"
  /// Plan every non-neutral frame of each active channel (the ones the
  /// tick does not use with weight 0), so their payloads are read: for
  /// exports that carry each frame as a morph target.
  bool all_frames = false;
  /// Plan every mesh that any replace candidate names and every draw of
  /// it, whatever the settings select (each mesh once, its draws in
  /// manifest order): for editors that hold a whole package at once, such
  /// as the Blender add-on's import. Components, texture slots and channels
  /// still follow the settings.
  bool every_draw = false;
};

/// The planned state of one target component.
struct PlannedComponent {
  std::uint32_t target = 0;     ///< index into Model::components
  std::uint32_t candidate = 0;  ///< index into its candidates (the one that holds)
  Operation op = Operation::kKeep;
  /// kReplace: index into Model::meshes and into Plan::meshes.
  std::uint32_t mesh = 0;
  std::uint32_t planned_mesh = 0;
  /// kReplace: the selected draw indices of the mesh (manifest order).
  std::vector<std::uint32_t> draws;
};

/// One selected draw inside the concatenated index stream of its mesh (§7:
/// selected draws in manifest order, `start` recomputed).
struct IndexSegment {
  std::uint32_t draw = 0;          ///< index into Mesh::draws
  std::uint32_t payload = 0;       ///< index payload id (1.0: the mesh's index payload)
  std::uint32_t source_start = 0;  ///< first index inside that payload (1.1+: 0)
  std::uint32_t start = 0;         ///< first index in the concatenated stream
  std::uint32_t count = 0;         ///< indices (multiple of 3)
};

/// One frame used by a channel at the evaluated tick, with its weight.
struct PlannedFrame {
  std::uint32_t frame = 0;    ///< index into Deformation::frames
  std::uint32_t value = 0;    ///< the frame's tick
  bool neutral = false;       ///< neutral frame: no payload, zero deltas
  std::uint32_t payload = 0;  ///< !neutral: sparse-position-f32 payload id
  std::uint32_t count = 0;    ///< !neutral: records N
  float weight = 1.0f;
};

/// An active deformation channel (§10: only on a mesh selected for replace).
struct PlannedChannel {
  std::uint32_t deformation = 0;  ///< index into Model::deformations
  std::uint32_t mesh = 0;         ///< index into Model::meshes
  std::uint32_t parameter = 0;    ///< index into Model::parameters
  std::uint32_t tick = 0;         ///< tick used (neutral when unavailable)
  bool available = true;          ///< the parameter's available_when holds
  /// Exactly on a frame: one frame, weight 1. Between frames a < v < b: two
  /// frames with weights (b−v)/(b−a) and (v−a)/(b−a). With
  /// PlanOptions::all_frames, every other non-neutral frame too, weight 0;
  /// frames in Deformation::frames order.
  std::vector<PlannedFrame> frames;
};

/// A mesh used by at least one replace in the plan (each mesh once, even
/// when it replaces several components).
struct PlannedMesh {
  std::uint32_t mesh = 0;                 ///< index into Model::meshes
  std::vector<std::uint32_t> components;  ///< targets it replaces (ascending)
  std::vector<std::uint32_t> draws;       ///< selected draws (manifest order)
  std::vector<IndexSegment> segments;     ///< one per selected draw, same order
  std::uint32_t index_count = 0;          ///< total of the concatenated stream
  /// Vertex stream payloads, per stream (nullopt: empty stream, stride 0).
  std::vector<std::optional<std::uint32_t>> stream_payloads;
  /// Active channels of this mesh (Model::deformations order).
  std::vector<PlannedChannel> channels;
};

/// A texture binding of a selected draw or of a keep override (§7, §6, §9).
struct TextureBinding {
  enum class Source : std::uint8_t { kDraw, kKeepOverride };
  Source source = Source::kDraw;
  std::uint32_t mesh = 0;            ///< kDraw: index into Model::meshes
  std::uint32_t draw = 0;            ///< kDraw: index into Mesh::draws
  std::uint32_t component = 0;       ///< kKeepOverride: target; kDraw: material_component
  std::uint32_t override_index = 0;  ///< kKeepOverride: index into Candidate::overrides
  std::uint32_t material_slot = 0;
  std::string material_name;
  std::uint32_t entry = 0;            ///< index in the textures list it came from
  std::optional<std::uint32_t> slot;  ///< set when written as {"slot": …}
  /// The texture bound: nullopt = a slot's null candidate, keep the original.
  std::optional<std::uint32_t> texture;
  /// Name of the original texture replaced ("" for a slot whose candidates
  /// are all null: nothing names it).
  std::string original_name;
};

struct Plan {
  std::string resource;  ///< PlanOptions, echoed ("" = whole package)
  std::string platform;
  std::vector<PlannedComponent> components;  ///< by target, ascending
  std::vector<PlannedMesh> meshes;           ///< by mesh index, ascending
  /// All selected (mesh, draw) pairs in manifest order.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> draws;
  /// Draw bindings in (mesh, draw, entry) order, then keep overrides in
  /// (target, override, entry) order.
  std::vector<TextureBinding> textures;
  /// Per parameter (manifest order): the tick evaluation uses.
  std::vector<std::uint32_t> parameter_ticks;
  /// Every payload id the selection uses: vertex streams and index payloads
  /// of planned meshes, bound textures, frame payloads with a non-zero
  /// weight. Sorted, unique.
  std::vector<std::uint32_t> payloads;
};

/// §10: the frames of a channel evaluated at `tick`, with their weights:
/// exactly on a frame, that frame with weight 1; between frames a < v < b,
/// both with (b−v)/(b−a) and (v−a)/(b−a). Empty when no frame covers the
/// tick (make_plan's BEM_PLAN_FRAMES).
std::vector<std::pair<std::uint32_t, float>> channel_frame_weights(const Deformation& def,
                                                                   std::uint32_t tick);

/// Compute the plan of one normalised selection. Errors (code, message,
/// JSON-pointer-like location): BEM_PLAN_RESOURCE (unknown resource, or a
/// resource asked of a package without 1.4 resources), BEM_PLAN_PLATFORM
/// (platform not served by the resource, or only one of the two given),
/// BEM_PLAN_CANDIDATES (not exactly one candidate holds), BEM_PLAN_RANGE (an
/// index out of range: the model skipped validation), BEM_PLAN_SETTINGS
/// (settings sized for another model), BEM_PLAN_FRAMES (no frame pair covers
/// a tick).
core::Result<Plan> make_plan(const Model& model, const Settings& settings,
                             const PlanOptions& options = {});

}  // namespace charkit::bem
