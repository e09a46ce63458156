// GltfDocument: the one checked glTF 2.0 reader of the library (docs/scene.md
// "GltfDocument"). It splits GLB containers, parses the JSON strictly, loads
// buffers (the GLB BIN chunk, base64 data: URIs, files next to the .gltf)
// lazily under a size cap, and reads accessors as typed arrays: byteStride,
// every componentType, normalized integers (glTF 2.0 §3.11), matrix column
// padding and sparse substitution. Every error carries a JSON pointer (or a
// byte offset for the container). The JSON stays available for what the
// reader does not model (extensions such as VRM, unknown members to keep).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "charkit/core/bytes.h"
#include "charkit/core/error_code.h"
#include "charkit/core/result.h"
#include "charkit/scene/gltf_asset.h"

namespace charkit::scene {

/// The GLB container (glTF 2.0 §4.4): the header's magic and the two chunk
/// types, little-endian u32s.
namespace gltf {
inline constexpr std::uint32_t kGlbMagic = 0x46546C67;   // "glTF"
inline constexpr std::uint32_t kChunkJson = 0x4E4F534A;  // "JSON"
inline constexpr std::uint32_t kChunkBin = 0x004E4942;   // "BIN\0"
}  // namespace gltf

/// A condition worth reporting that does not stop loading.
struct GltfWarning {
  std::string code;
  std::string message;
};

/// The chunks of a GLB container (glTF 2.0 §4.4), checked: header magic,
/// version 2, declared length within the bytes, JSON chunk first, at most one
/// BIN chunk right after it, every chunk inside the declared length.
struct GlbChunks {
  core::Bytes json;                ///< JSON chunk, trailing NUL padding removed
  std::optional<core::Bytes> bin;  ///< BIN chunk, when present
  std::vector<GltfWarning>
      warnings;  ///< GLB_TRAILING_BYTES, GLB_ALIGNMENT, GLB_JSON_NUL_PADDING, GLB_UNKNOWN_CHUNK
};

/// True when bytes start with the GLB magic "glTF".
bool is_glb(core::Bytes bytes);

/// Errors (byte offset): GLB_TRUNCATED, GLB_VERSION, GLB_LENGTH,
/// GLB_CHUNK_TYPE, GLB_CHUNK_LENGTH, GLB_MAGIC.
core::Result<GlbChunks> split_glb(core::Bytes bytes);

/// A relative glTF URI (RFC 3986 path, percent-decoded) resolved against
/// base ("" or a folder written with '/'), as a '/'-separated path. Refuses
/// (GLTF_URI_UNSAFE, at pointer): empty URIs, NUL bytes, absolute paths,
/// schemes and drive letters (http:, file:, C:), and ".." segments.
core::Result<std::string> resolve_gltf_uri(const std::string& base, const std::string& uri,
                                           const std::string& pointer);

struct GltfLoadOptions {
  /// Folder that relative buffer URIs resolve against ("" = external files
  /// are refused with GLTF_URI_EXTERNAL). load_file sets it to the file's folder.
  std::string base_dir;
  /// Cap on the JSON text plus all buffer bytes loaded or decoded, and on the
  /// size of any one accessor read (GLTF_LIMIT above it).
  std::uint64_t max_total_bytes = std::uint64_t{2} << 30;
  /// Cap on the declared size (count × element size) of an accessor without
  /// a bufferView (zeros, plus sparse values), which no data bounds.
  std::uint64_t max_zero_accessor_bytes = std::uint64_t{64} << 20;
  /// Nesting limit of the JSON.
  std::size_t max_json_depth = 64;
};

class GltfDocument {
 public:
  /// Loads GLB or glTF JSON from bytes (the bytes are copied where needed:
  /// the document does not refer to them afterwards). Errors: GLB_* (byte
  /// offset), JSON_* (offset into the JSON), GLTF_NOT_OBJECT (root not an object),
  /// GLTF_LIMIT (JSON above max_total_bytes), and read_gltf_asset's errors
  /// (the typed elements are read once, here).
  static core::Result<GltfDocument> load(core::Bytes bytes, const GltfLoadOptions& options = {});
  /// Maps the file and loads it with base_dir = the file's folder (when
  /// options.base_dir is empty). Adds IO_* errors.
  static core::Result<GltfDocument> load_file(const std::string& path,
                                              GltfLoadOptions options = {});

  GltfDocument(GltfDocument&&) noexcept;
  GltfDocument& operator=(GltfDocument&&) noexcept;
  ~GltfDocument();

  bool glb() const;
  /// The parsed JSON (core::Json, an nlohmann::ordered_json; include
  /// charkit/core/json.h to use it), read-only: what glTF defines is read
  /// through asset(), and changes go through GltfEditor.
  const nlohmann::ordered_json& json() const;
  const std::vector<GltfWarning>& warnings() const;
  /// The typed elements, as loaded (read_gltf_asset). Changes made through
  /// json() afterwards are not seen here; edits go through GltfEditor.
  const GltfAsset& asset() const;

  /// The first byteLength bytes of buffer `index`, loaded once. Errors (at
  /// /buffers/i…): GLTF_BUFFER (missing, bad byteLength, fewer bytes than
  /// declared, no BIN chunk), GLTF_URI (a data: URI that is not base64),
  /// BASE64_* (bad base64), GLTF_URI_UNSAFE / GLTF_URI_EXTERNAL (a file URI
  /// that may not or cannot be read), IO_* (the file), GLTF_LIMIT.
  core::Result<core::Bytes> buffer(std::size_t index);

  /// The bytes of bufferView `index`, range-checked against its buffer.
  /// Errors: GLTF_BUFFER_VIEW (at /bufferViews/i…), buffer()'s errors.
  core::Result<core::Bytes> buffer_view(std::size_t index);

  /// Accessor declaration (asset().accessors[index]). Errors: GLTF_ACCESSOR
  /// (at /accessors/i) for an index past the accessors.
  core::Result<GltfAccessorInfo> accessor(std::size_t index) const;

  /// count × components values, element-major. Integers are converted as
  /// numbers; normalized integers with glTF 2.0 §3.11 (unsigned c / (2^n − 1),
  /// signed max(c / (2^(n−1) − 1), −1)); no bufferView = zeros; sparse
  /// substitutions applied. Errors: GLTF_ACCESSOR / GLTF_SPARSE (at
  /// /accessors/i/…, /accessors/i/sparse/indices …), GLTF_BUFFER_VIEW (at
  /// /bufferViews/j), buffer()'s errors, GLTF_LIMIT.
  core::Result<std::vector<float>> read_accessor_floats(std::size_t index);
  core::Result<std::vector<double>> read_accessor_doubles(std::size_t index);
  /// For integer accessors that are not normalized (indices, JOINTS_n):
  /// GLTF_ACCESSOR for a float or normalized accessor.
  core::Result<std::vector<std::uint32_t>> read_accessor_uints(std::size_t index);

 private:
  friend class GltfEditor;  // the one writer of the JSON (gltf_editor.h)
  struct Impl;
  explicit GltfDocument(std::unique_ptr<Impl> impl);
  nlohmann::ordered_json& mutable_json();
  std::unique_ptr<Impl> impl_;
};

/// Reads a float attribute accessor of `components` per element and `count`
/// elements (0: any count); `code` at `pointer` when the shape differs. The
/// one shape-checked read of vertex data.
core::Result<std::vector<float>> read_float_attribute(GltfDocument& doc, std::size_t accessor,
                                                      std::size_t components, std::size_t count,
                                                      const core::ErrorCode& code,
                                                      const std::string& pointer);

}  // namespace charkit::scene
