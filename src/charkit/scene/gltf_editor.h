// GltfEditor: the one way the library changes a loaded glTF document and
// writes it back (docs/scene.md "The glTF layer"): new data goes to the end
// of the document's one buffer as new accessors, and primitives, meshes,
// nodes and animation samplers are pointed at them. What `charkit deform
// morph`, `deform subdivide` and `deformer bake` write goes through it. Its
// layout rules are the writer's (gltf_writer.h): every bufferView starts on
// a multiple of 4, one bufferView per accessor, no byteStride; FLOAT
// accessors may carry min and max; index lists use UNSIGNED_SHORT when every
// value is below 65535, else UNSIGNED_INT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/error_code.h"
#include "charkit/core/result.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::scene {

/// What a new bufferView holds: its glTF `target` (glTF 2.0 §3.6.1.1).
enum class GltfViewUse {
  kVertices,  ///< vertex attributes and morph targets: ARRAY_BUFFER
  kIndices,   ///< an index list: ELEMENT_ARRAY_BUFFER
  kOther,     ///< animation keyframes, inverse bind matrices: no target
};

class GltfEditor {
 public:
  /// What happens to buffers after the first: refused, or written back as
  /// they are (their URIs unchanged: data: URIs stay valid anywhere, file
  /// URIs only next to the same files).
  enum class OtherBuffers { kRefuse, kKeep };

  /// Starts editing `doc` (which must outlive the editor) and takes a copy
  /// of buffer 0 (none: an empty one) to append to. A document with several
  /// buffers is refused with `code` at /buffers unless `others` is kKeep.
  /// Adds buffer()'s errors.
  static core::Result<GltfEditor> begin(GltfDocument& doc, const core::ErrorCode& code,
                                        OtherBuffers others = OtherBuffers::kRefuse);

  GltfEditor(GltfEditor&&) noexcept;
  GltfEditor& operator=(GltfEditor&&) noexcept;
  ~GltfEditor();

  /// The elements as loaded: indices stay valid, since edits only append.
  const GltfAsset& asset() const;
  /// The document, to read accessors with.
  GltfDocument& document();
  /// Bytes in the buffer so far (to check a size limit before appending).
  std::uint64_t buffer_size() const;

  /// `values` as one FLOAT accessor of `components` (1 to 4: SCALAR … VEC4)
  /// per element, with min and max when `bounds`. Returns its index.
  std::size_t append_floats(std::span<const float> values, std::size_t components, bool bounds,
                            GltfViewUse use = GltfViewUse::kVertices);
  /// Unsigned integers of `components` per element. `component` chooses the
  /// type; unset: UNSIGNED_SHORT when every value is below 65535, else
  /// UNSIGNED_INT. Values must fit the chosen type.
  std::size_t append_uints(std::span<const std::uint32_t> values, std::size_t components,
                           GltfViewUse use, std::optional<GltfComponent> component = std::nullopt);

  /// Points primitive `prim` of mesh `mesh` at new data. set_attributes
  /// replaces the whole attribute set (and set_targets every morph target).
  void set_attribute(std::size_t mesh, std::size_t prim, std::string_view semantic,
                     std::size_t accessor);
  void set_attributes(std::size_t mesh, std::size_t prim, const GltfAttributes& attributes);
  void set_indices(std::size_t mesh, std::size_t prim, std::size_t accessor);
  void set_targets(std::size_t mesh, std::size_t prim, const std::vector<GltfAttributes>& targets);
  /// Appends a morph target to one primitive.
  void add_target(std::size_t mesh, std::size_t prim, const GltfAttributes& target);
  /// mesh.extras.targetNames (other extras are kept).
  void set_target_names(std::size_t mesh, const std::vector<std::string>& names);
  /// Default morph weights of a mesh or a node.
  void set_mesh_weights(std::size_t mesh, const std::vector<double>& weights);
  void set_node_weights(std::size_t node, const std::vector<double>& weights);
  /// Animation `anim`'s sampler `sampler` reads its values from `accessor`.
  void set_sampler_output(std::size_t anim, std::size_t sampler, std::size_t accessor);

  /// The edited document as a GLB (buffer 0 is the BIN chunk). Errors:
  /// SCENE_TOO_LARGE past 4 GiB. The editor is spent afterwards.
  core::Result<std::vector<std::uint8_t>> finish_glb();
  /// As glTF JSON text with buffer 0 embedded as a base64 data: URI.
  std::string finish_gltf_embedded();

 private:
  struct Impl;
  explicit GltfEditor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace charkit::scene
