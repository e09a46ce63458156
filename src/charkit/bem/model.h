// A typed, read-only view of a BEM manifest: what the decision graph, the
// selection planner, the morph evaluator and the exporter work on. It is
// built from a manifest that passed validation (build_model still checks
// every field it reads and fails with a location instead of crashing, so a
// caller that skipped validation gets an error, not undefined behaviour).
//
// One shape for every version: a 1.0 package's appearances become one
// option group (id "appearance", one choice per appearance id) and each
// component gets one candidate per appearance with `when = eq(appearance, id)`;
// 1.0 draws are always selected and index into the mesh-level index payload.
// The proof and the planner therefore need no 1.0 special case beyond the
// settings-string syntax (Model::appearance_structure).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/json_fwd.h"
#include "charkit/core/result.h"

namespace charkit::bem {

class Package;

/// A §6 condition with group and choice references resolved to indices.
struct Condition {
  enum class Op : std::uint8_t { kTrue, kFalse, kEq, kAll, kAny, kNot };
  Op op = Op::kTrue;
  std::uint32_t group = 0;          ///< kEq: index into Model::groups
  std::uint32_t choice = 0;         ///< kEq: index into that group's choices
  std::vector<Condition> operands;  ///< kAll/kAny: 1..32; kNot: exactly 1

  static Condition always() { return {}; }
  static Condition eq(std::uint32_t g, std::uint32_t c) {
    Condition x;
    x.op = Op::kEq;
    x.group = g;
    x.choice = c;
    return x;
  }
};

/// Effective option values, one per group in manifest order: the choice
/// index, or nullopt when the group is unavailable (§6: no effective value;
/// every eq on it is false).
using EffectiveValues = std::vector<std::optional<std::uint32_t>>;

/// Evaluate a condition at one effective selection.
bool evaluate(const Condition& c, const EffectiveValues& values);

struct Group {
  std::string id;
  std::string name;
  std::vector<std::string> choices;         ///< choice ids, in manifest order
  std::uint32_t default_choice = 0;         ///< index into choices
  std::optional<Condition> available_when;  ///< refers only to earlier groups
};

/// An entry of a draw's or keep override's "textures" list.
struct TextureRef {
  bool is_slot = false;
  std::uint32_t texture = 0;  ///< !is_slot: index into Model::textures
  std::uint32_t slot = 0;     ///< is_slot: index into Model::slots
};

enum class Operation : std::uint8_t { kKeep, kHide, kReplace };
const char* operation_name(Operation op);

/// §6 keep material_overrides entry.
struct KeepOverride {
  std::uint32_t material_slot = 0;
  std::string material_name;
  std::vector<TextureRef> textures;
};

struct Candidate {
  Condition when;
  Operation op = Operation::kKeep;
  std::uint32_t mesh = 0;               ///< kReplace: index into Model::meshes
  std::vector<KeepOverride> overrides;  ///< kKeep only
  std::string pointer;                  ///< JSON pointer of the candidate (or 1.0 appearance entry)
};

struct Component {
  std::string mesh_name;
  std::uint32_t original_index_count = 0;
  std::vector<std::string> bone_names;
  std::vector<std::string> materials;
  std::string resource;               ///< 1.4 explicit targets: resource id ("" otherwise)
  std::string renderer_kind;          ///< 1.4: "skinned" / "static" ("" otherwise)
  std::vector<Candidate> candidates;  ///< component_rules[i].candidates
};

struct Draw {
  Condition when;             ///< 1.1+: absent "when" is true; 1.0: always true
  std::uint32_t indices = 0;  ///< 1.1+: index payload id; 1.0: the mesh's index payload
  std::uint32_t start = 0;    ///< 1.0: first index in the mesh index payload; 1.1+: 0
  std::uint32_t count = 0;    ///< number of indices (multiple of 3)
  std::uint32_t material_component = 0;
  std::uint32_t material_slot = 0;
  std::string material_name;
  std::vector<TextureRef> textures;
  core::JsonBox material_overrides;  ///< 1.5 §12 object, null when absent
};

struct VertexStream {
  std::uint32_t stride = 0;  ///< 0: empty stream (static 1.4 meshes only)
  std::uint32_t payload = 0;
};

/// [semantic, format, dimension, stream, offset] (Unity VertexAttributeDescriptor).
struct VertexAttribute {
  std::uint32_t semantic = 0;
  std::uint32_t format = 0;
  std::uint32_t dimension = 0;
  std::uint32_t stream = 0;
  std::uint32_t offset = 0;
};

struct PaletteBone {
  std::uint32_t component = 0;
  std::uint32_t index = 0;
  std::string name;
};

struct Mesh {
  std::uint32_t vertex_count = 0;
  std::uint32_t index_size = 4;       ///< 2 or 4
  std::vector<VertexStream> streams;  ///< 3 entries (1.4 static: 1..3)
  std::vector<VertexAttribute> attributes;
  std::vector<PaletteBone> bones;
  std::vector<Draw> draws;
  bool is_static = false;     ///< 1.4 renderer_kind "static"
  std::string renderer_kind;  ///< 1.4 ("" otherwise)
};

struct Texture {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t mips = 1;
  std::uint32_t format = 0;  ///< Unity TextureFormat (§8 table)
  bool srgb = false;
  std::string original_name;
  std::uint32_t payload = 0;
  std::string semantic;         ///< "" or "normal"
  std::string normal_encoding;  ///< "" / "xy-unorm" / "xyz-unorm"
};

struct SlotCandidate {
  Condition when;
  std::optional<std::uint32_t> texture;  ///< nullopt: keep the original texture
};

struct TextureSlot {
  std::string id;
  std::vector<SlotCandidate> candidates;
};

struct Parameter {
  std::string id;
  std::string name;
  std::uint32_t min = 0;
  std::uint32_t max = 0;
  std::uint32_t neutral = 0;
  std::uint32_t default_value = 0;
  std::uint32_t step = 1;
  std::optional<Condition> available_when;
};

struct DeformationFrame {
  std::uint32_t value = 0;
  bool neutral = false;       ///< the neutral frame has no payload
  std::uint32_t payload = 0;  ///< sparse-position-f32 payload id
  std::uint32_t count = 0;    ///< records N
};

/// One §10 deformation channel.
struct Deformation {
  std::uint32_t mesh = 0;
  std::uint32_t parameter = 0;           ///< index into Model::parameters
  std::vector<DeformationFrame> frames;  ///< strictly increasing values
};

/// 1.4 explicit-target resource.
struct Resource {
  std::string id;
  std::string name;
  std::string asset_path;
  std::vector<std::string> platforms;
  std::uint32_t lod = 0;
};

struct Model {
  int minor = 0;  ///< the version whose rules apply (header minor or ZIP hint/inference)
  /// 1.0 structure: groups holds the one synthetic "appearance" group and
  /// settings strings are appearance ids.
  bool appearance_structure = false;
  std::vector<std::string> appearance_preview_ids;  ///< 1.0: appearance id per choice (same order)

  std::vector<Group> groups;
  std::vector<Condition> constraints;  ///< selection_constraints (all must hold)
  std::vector<Component> components;
  std::vector<Mesh> meshes;
  std::vector<Texture> textures;
  std::vector<TextureSlot> slots;
  std::vector<Parameter> parameters;
  std::vector<Deformation> deformations;
  std::vector<Resource> resources;  ///< 1.4 explicit targets, else empty

  /// Decoded size of every payload (from the container directory / ZIP).
  std::vector<std::uint64_t> payload_sizes;

  /// Index of a group / parameter / slot by id, or -1.
  int find_group(std::string_view id) const;
  int find_parameter(std::string_view id) const;
  int find_slot(std::string_view id) const;
};

/// Build the typed view of a parsed manifest. `minor` is the version whose
/// rules apply (ValidationSummary::effective_minor). Fails with the JSON
/// pointer of the first field it cannot read.
core::Result<Model> build_model(const core::Json& manifest, const Package& package, int minor);

}  // namespace charkit::bem
