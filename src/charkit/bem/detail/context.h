// Internal to bem/: the state shared by the validation passes. Each pass
// (check_*.cpp) reads the manifest DOM, reports issues with spec section and
// JSON pointer, records facts for later passes, and registers payload uses
// that the payload pass checks after decoding each payload once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "charkit/core/report.h"

namespace charkit::bem {

using core::Json;

/// Most vertices one mesh may have (§7, §11): the mesh and morph passes both
/// bound their reads by it.
inline constexpr std::uint32_t kMaxVertices = 1048576;

/// The elements of a manifest array with their JSON pointers, for the loops
/// of every pass:
///
///   for (const auto& [e, eptr, i] : elements(*list, "/appearances")) {
///     if (!ctx.expect_object(e, eptr, "§5")) continue;
///     ...
///   }
///
/// An element's pointer is made when the loop reaches it.
class ArrayElements {
 public:
  struct Element {
    const Json& value;
    std::string pointer;
    std::size_t index;
  };
  class Iterator {
   public:
    Iterator(const Json* array, const std::string* base, std::size_t i)
        : array_(array), base_(base), i_(i) {}
    Element operator*() const {
      return Element{(*array_)[i_], core::json_pointer_join(*base_, i_), i_};
    }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }

   private:
    const Json* array_;
    const std::string* base_;
    std::size_t i_;
  };

  /// `array` must be a JSON array (get_array() checked it) and outlive this.
  ArrayElements(const Json& array, std::string pointer)
      : array_(array), pointer_(std::move(pointer)) {}
  Iterator begin() const { return Iterator(&array_, &pointer_, 0); }
  Iterator end() const { return Iterator(&array_, &pointer_, array_.size()); }

 private:
  const Json& array_;
  std::string pointer_;
};

inline ArrayElements elements(const Json& array, std::string pointer) {
  return ArrayElements(array, std::move(pointer));
}

/// What a payload is used as; the payload pass checks its bytes accordingly.
enum class PayloadRole {
  kVertexStream,  ///< stream 0/1: size only
  kSkinStream,    ///< stream 2: weights sum, indices < palette
  kIndices,       ///< index buffer: each index < vertex_count
  kTexture,       ///< size only (full mip chain)
  kDeformation,   ///< sparse-position-f32 frame (§10)
  kPreview,       ///< PNG ≤ 8 MiB
  kSound,         ///< 16 B .. 32 MiB
};

struct PayloadUse {
  PayloadRole role = PayloadRole::kVertexStream;
  std::string pointer;             ///< where the manifest references it
  std::uint32_t vertex_count = 0;  ///< indices, skin, deformation
  std::uint32_t index_size = 0;    ///< indices: 2 or 4
  std::uint32_t skin_stride = 0;   ///< skin: 4, 12 or 32
  std::uint32_t palette_size = 0;  ///< skin: number of bones in the palette
  std::uint32_t count = 0;         ///< deformation: records N declared in the manifest
};

/// Facts one pass leaves for the next ones.
struct ComponentFacts {
  std::string mesh_name;
  std::vector<std::string> bone_names;
  std::vector<std::string> materials;
  std::string resource;       ///< 1.4: resource id ("" in legacy form)
  std::string renderer_kind;  ///< 1.4: "skinned" / "static" ("" in legacy form)
};

struct MeshFacts {
  std::uint32_t vertex_count = 0;
  std::uint32_t index_size = 0;
  bool has_float3_position = false;  ///< semantic 0, format 0, dimension 3
  bool is_static = false;
  bool valid = false;  ///< false when the mesh's basic fields were broken
};

struct TextureFacts {
  std::string original_name;
  bool valid = false;
};

class Context {
 public:
  Context(const Json& manifest, const Package& package, core::Report& report,
          const ValidateOptions& options, int effective_minor, bool minor_known);

  const Json& manifest;
  const Package& package;
  core::Report& report;
  const ValidateOptions& options;
  bool skip_validation() const { return options.skip_validation; }

  // ---- version -------------------------------------------------------
  /// The version whose rules apply: the header minor (binary), the
  /// format_version hint (ZIP) or, for a ZIP without hint, 0 for a 1.0
  /// structure and 5 otherwise.
  int minor() const { return minor_; }
  bool minor_known() const { return minor_known_; }
  /// The content needs at least BEM 1.m (a feature or a limit of that version).
  /// Error BEM_VERSION_TOO_LOW when the declared version is lower.
  void need_minor(int m, const std::string& what, const std::string& pointer,
                  const char* section = "§1");
  /// The content is only allowed up to BEM 1.m (e.g. 1.0 appearances).
  /// Error BEM_VERSION_TOO_HIGH when the effective version is higher.
  void allow_max_minor(int m, const std::string& what, const std::string& pointer,
                       const char* section = "§1");
  int needed_minor() const { return needed_minor_; }

  // ---- capabilities --------------------------------------------------
  std::set<std::string> declared_capabilities;
  /// A feature needing capability cap is used at pointer. Checked at the end:
  /// BEM_CAPABILITY_MISSING when not declared. Also calls need_minor for the
  /// capability's version.
  void use_capability(const std::string& cap, const std::string& pointer);
  std::map<std::string, std::string> used_capabilities;  // cap -> first pointer

  // ---- issues --------------------------------------------------------
  void error(core::ErrorCode code, const char* section, const std::string& pointer,
             const std::string& message);
  void warning(core::ErrorCode code, const char* section, const std::string& pointer,
               const std::string& message);
  void info(core::ErrorCode code, const char* section, const std::string& pointer,
            const std::string& message);

  // ---- typed field access (each reports its own error) ---------------
  /// The member or nullptr. Required + missing -> BEM_FIELD_MISSING.
  const Json* field(const Json& obj, const char* key, const std::string& obj_ptr, bool required,
                    const char* section);
  /// UInt32 member in [lo, hi]. Missing/not UInt32 -> BEM_FIELD_TYPE / BEM_FIELD_MISSING;
  /// out of range -> BEM_FIELD_RANGE. nullopt on any error or (optional and) absence.
  std::optional<std::uint32_t> get_u32(const Json& obj, const char* key, const std::string& obj_ptr,
                                       bool required, std::uint64_t lo, std::uint64_t hi,
                                       const char* section);
  /// String member; with max_bytes checked (UTF-8 bytes). BEM_FIELD_TYPE / BEM_STRING_LENGTH.
  std::optional<std::string> get_string(const Json& obj, const char* key,
                                        const std::string& obj_ptr, bool required,
                                        std::size_t max_bytes, const char* section);
  /// Stable ID member ([A-Za-z0-9][A-Za-z0-9_.-]{0,95}); BEM_STABLE_ID on a bad one.
  std::optional<std::string> get_stable_id(const Json& obj, const char* key,
                                           const std::string& obj_ptr, bool required,
                                           const char* section);
  std::optional<bool> get_bool(const Json& obj, const char* key, const std::string& obj_ptr,
                               bool required, const char* section);
  /// Finite number member in [lo, hi].
  std::optional<double> get_number(const Json& obj, const char* key, const std::string& obj_ptr,
                                   bool required, double lo, double hi, const char* section);
  /// Array member with size in [lo, hi]; nullptr on error or absence.
  const Json* get_array(const Json& obj, const char* key, const std::string& obj_ptr, bool required,
                        std::size_t lo, std::size_t hi, const char* section);
  /// Check that j is an object; BEM_FIELD_TYPE if not.
  bool expect_object(const Json& j, const std::string& ptr, const char* section);
  /// An array element that must be a string: the string, or nullptr after
  /// BEM_FIELD_TYPE "<what>, found <type>".
  const std::string* expect_string(const Json& j, const std::string& ptr, const char* section,
                                   const std::string& what);

  // ---- payloads ------------------------------------------------------
  /// A manifest reference to payload id. Checks the id exists (binary:
  /// BEM_PAYLOAD_ID; ZIP: BEM_ZIP_MISSING_PAYLOAD "ZIP package is missing
  /// payload N"), that the decoded size is in [min_size, max_size] (use equal
  /// bounds for an exact size; BEM_PAYLOAD_SIZE), and queues content checks.
  /// Returns false if the id or size is wrong.
  bool use_payload(std::uint32_t id, std::uint64_t min_size, std::uint64_t max_size,
                   PayloadUse use);
  std::map<std::uint32_t, std::vector<PayloadUse>> payload_uses;

  // ---- facts shared between passes ------------------------------------
  bool explicit_targets = false;  ///< target has "resources" (1.4 form)
  bool structure_v10 = false;     ///< 1.0 appearances structure
  std::vector<ComponentFacts> components;
  std::vector<MeshFacts> meshes;
  std::vector<TextureFacts> textures;
  /// Option groups in manifest order: id -> choice ids.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  std::set<std::string> texture_slot_ids;
  /// slot id -> original_name its non-null candidates replace ("" if only null).
  std::map<std::string, std::string> texture_slot_original;
  /// (component, mesh) pairs: every "replace" in appearances and component rules.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> replacements;
  std::set<std::string> parameter_ids;
  /// Total candidates across the package (§11: component + draw + slot candidates).
  std::uint64_t total_candidates = 0;

 private:
  int minor_;
  bool minor_known_;
  int needed_minor_ = 0;
  std::set<std::string> version_reported_;  ///< pointers with a BEM_VERSION_TOO_LOW
};

/// Does s match the stable-ID rule [A-Za-z0-9][A-Za-z0-9_.-]{0,95}?
bool is_stable_id(std::string_view s);
/// Minimum minor version of a known capability, or -1 if unknown.
int capability_min_minor(std::string_view cap);
/// All known capabilities in the order §1 lists them.
const std::vector<std::string>& known_capabilities();

// ---- the passes, in the order validate.cpp runs them ----------------
/// §3 top level, §1 capabilities (declared set; missing ones are checked at the end).
void check_top_level(Context& ctx);
/// §4 target (legacy form) and 1.4 explicit form, components, §9 bone aliases.
void check_target(Context& ctx);
/// §5 appearances (1.0); §6 option groups, conditions, component rules,
/// selection constraints; §9 texture slots (structure).
void check_options(Context& ctx);
/// §8 textures (must run before meshes: draws check original names).
void check_textures(Context& ctx);
/// §7 meshes: vertex counts, streams, attributes, skin layouts, bones, draws,
/// materials, texture references; 1.4 static meshes.
void check_meshes(Context& ctx);
/// §10 parameters and mesh deformations.
void check_morphs(Context& ctx);
/// §12 material overrides (draw field is checked by check_meshes through
/// check_material_overrides), root offset; §13 drivers.
void check_v15(Context& ctx);
/// §7/§9: a draw's or a keep override's "textures" list. Entries are texture
/// indices or (1.2+, capability texture-slots) {"slot": id}; the same texture
/// twice, or two entries replacing the same original texture name, is an error.
void check_texture_list(Context& ctx, const Json& list, const std::string& ptr);
/// §10: the bytes of one sparse-position-f32 frame payload.
void check_deformation_payload(Context& ctx, std::uint32_t id, core::Bytes bytes,
                               const PayloadUse& use);
/// §12: one draw's "material_overrides" object.
void check_material_overrides(Context& ctx, const Json& overrides, const std::string& ptr);
/// Decode every payload once and run the queued content checks.
void check_payload_data(Context& ctx);
/// End of validation: capabilities used but not declared, §11 totals.
void check_final(Context& ctx);

/// Condition syntax (§6): true/false/eq/all/any/not, depth ≤ 16, 1..32
/// operands, eq naming a group (only groups before `group_limit` when ≥ 0)
/// and one of its choices. Returns false if invalid (errors reported).
bool check_condition(Context& ctx, const Json& cond, const std::string& ptr, int group_limit,
                     const char* section);

}  // namespace charkit::bem
