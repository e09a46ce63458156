// Editing a loaded glTF document in place and appending new data to its one
// buffer (what `charkit deform morph` and `deform subdivide` do, in the ops
// module):
// typed member reads that never throw, attribute reads with a shape check,
// and accessor appends that keep the writer's layout rules (docs/scene.md:
// every bufferView 4-aligned, one bufferView per accessor, no byteStride).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/error_code.h"
#include "charkit/core/json.h"
#include "charkit/core/result.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::scene {

/// j[key] when j is an object and the member an unsigned integer.
std::optional<std::size_t> gltf_index_member(const core::Json& j, const char* key);

/// Reads a float attribute accessor of `components` per element and `count`
/// elements (0: any count); `code` at `pointer` when the shape differs.
core::Result<std::vector<float>> read_float_attribute(GltfDocument& doc, std::size_t accessor,
                                                      std::size_t components, std::size_t count,
                                                      const core::ErrorCode& code,
                                                      const std::string& pointer);

/// Appends `values` (components per element, glTF type name `type`) as a
/// new bufferView + FLOAT accessor; min/max when `bounds`. Returns its index.
std::size_t append_float_accessor(core::Json& root, std::vector<std::uint8_t>& bin,
                                  const std::vector<float>& values, std::size_t components,
                                  const char* type, bool bounds);

/// Appends unsigned integers as UNSIGNED_SHORT when every value is below
/// 65535 (the type's maximum is primitive restart), else UNSIGNED_INT.
/// `index_target` marks the bufferView ELEMENT_ARRAY_BUFFER (indices) rather
/// than ARRAY_BUFFER. Returns the accessor's index.
std::size_t append_uint_accessor(core::Json& root, std::vector<std::uint8_t>& bin,
                                 const std::vector<std::uint32_t>& values, std::size_t components,
                                 const char* type, bool index_target);

/// Starts an edit: refuses a document with several buffers (`code` at
/// /buffers), makes sure the root has "accessors" and "bufferViews" arrays
/// (before any reference into the root is taken: adding a member later could
/// move the root's members, an ordered_json being a vector), and returns a
/// copy of buffer 0 (empty when there is none) to append to.
core::Result<std::vector<std::uint8_t>> begin_edit(GltfDocument& doc, const core::ErrorCode& code);

/// Makes the document's buffer 0 the given bytes (no URI: the GLB BIN chunk)
/// and assembles the GLB.
core::Result<std::vector<std::uint8_t>> finish_glb(core::Json& root, std::vector<std::uint8_t> bin);

}  // namespace charkit::scene
