// The spec file of `bem pack --spec` (docs/bem/pack.md, "The spec file"):
// what a creator states about a packed package that the glTF scene cannot
// say — package metadata, options and rules, slider ranges and frames,
// per-draw material overrides, the root offset and drivers. Parsed and
// checked here (every error at its JSON pointer in the spec); applied by
// bem::pack_scene.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/json.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// One frame of a slider built from shape keys: the shape key's full
/// displacement at `value`, or the neutral frame (no displacement).
struct PackSpecFrame {
  std::int64_t value = 0;
  bool neutral = false;
  std::string shape_key;  ///< empty for the neutral frame
};

/// A §10 parameter as the spec describes it. Fields left out take the
/// defaults of a shape key slider (ticks 0..1000, neutral at min, step 1,
/// default from the mesh's weight).
struct PackSpecParameter {
  std::string id;
  std::optional<std::string> name;
  /// The shape key this parameter comes from when `frames` is empty
  /// (default: the shape key named like the id, or whose id-form is the id).
  std::optional<std::string> shape_key;
  std::optional<std::int64_t> min, max, step, neutral, default_value;
  std::optional<core::Json> available_when;
  std::vector<PackSpecFrame> frames;  ///< several shape keys on one slider
  std::string pointer;                ///< "/parameters/N" in the spec
};

/// A draw's §12 material_overrides object, set from the spec.
struct PackSpecDrawOverride {
  std::uint32_t mesh = 0;
  std::uint32_t draw = 0;
  core::Json overrides;  ///< floats / colors / enable_keywords / disable_keywords
  std::string pointer;   ///< "/material_overrides/N" in the spec
};

struct PackSpec {
  /// Top-level manifest fields set as given: package_id, name, author,
  /// version, option_groups, component_rules, selection_constraints,
  /// texture_slots, root_offset, drivers (each replaces the template's).
  core::Json fields = core::Json::object();
  std::vector<PackSpecParameter> parameters;
  std::vector<PackSpecDrawOverride> material_overrides;
};

/// Parse a spec document (BEM_PACK_SPEC at the spec's JSON pointer for a
/// field of the wrong type, an unknown field, a parameter without an id or
/// with frames that are not strictly increasing, lack one neutral frame or
/// name no shape key).
core::Result<PackSpec> parse_pack_spec(const core::Json& spec);

/// Parse the bytes of a spec file (the strict JSON parser's errors for text
/// that is not JSON, then as above).
core::Result<PackSpec> parse_pack_spec(core::Bytes json);

}  // namespace charkit::bem
