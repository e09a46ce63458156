// Model intake: identify a character model from its bytes (not its file
// name) and report what it holds — format and container, glTF asset
// version, VRM version and metadata, skin, humanoid bones, and counts of
// meshes, vertices, triangles, materials, textures, animations and morph
// targets. The rules and the JSON form are in docs/model.md.
//
// Formats: GLB (glTF 2.0 binary), glTF JSON, a ZIP holding one .gltf with its
// buffers and images, VRM 0.x / 1.0 (a GLB with the VRM / VRMC_vrm
// extension), FBX binary and FBX ASCII (counted through Assimp).
// Every length and index is checked; untrusted input gives an Error with a
// byte offset or JSON pointer, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::scene {

/// What kind of model the bytes are (the file name plays no part).
enum class ModelFormat {
  kGltf,  ///< glTF 2.0 without a VRM extension (GLB, JSON or zip container)
  kVrm,   ///< glTF 2.0 with `extensions.VRM` (0.x) or `extensions.VRMC_vrm` (1.0)
  kFbx,   ///< Autodesk FBX (binary or ASCII)
};

/// How the model is stored.
enum class ModelContainer {
  kGlb,        ///< glTF 2.0 binary: 12-byte header, JSON chunk, optional BIN chunk
  kGltfJson,   ///< a glTF JSON document on its own
  kZip,        ///< a ZIP archive holding one .gltf and the files it refers to
  kFbxBinary,  ///< "Kaydara FBX Binary  \0" header
  kFbxAscii,   ///< "; FBX x.y.z project file" comment or FBXHeaderExtension
};

/// Stable lower-case names used in text and JSON output ("gltf", "vrm", "fbx").
std::string_view format_name(ModelFormat f);
/// "glb", "gltf-json", "zip", "fbx-binary", "fbx-ascii".
std::string_view container_name(ModelContainer c);

/// A condition worth telling the user that does not stop the inspection.
struct IntakeWarning {
  std::string code;     ///< stable UPPER_SNAKE code, e.g. VRM_EXTENSION_MISSING
  std::string message;  ///< human text
};

/// VRM facts (present when the format is kVrm).
struct VrmInfo {
  std::string version;                     ///< "0.x" or "1.0"
  std::string spec_version;                ///< `specVersion` as written ("" if absent)
  std::string exporter_version;            ///< VRM 0.x `exporterVersion` ("" if absent)
  std::string title;                       ///< 0.x meta.title, 1.0 meta.name
  std::string author;                      ///< 0.x meta.author, 1.0 meta.authors joined by ", "
  std::string model_version;               ///< meta.version
  std::size_t humanoid_bones = 0;          ///< entries of humanoid.humanBones
  std::vector<std::string> missing_bones;  ///< required humanoid bones not present (spec order)
};

struct ModelInfo {
  ModelFormat format = ModelFormat::kGltf;
  ModelContainer container = ModelContainer::kGlb;
  std::string gltf_version;       ///< asset.version ("" for FBX)
  std::string generator;          ///< asset.generator, or the FBX creator where known
  std::uint32_t fbx_version = 0;  ///< e.g. 7400 (FBX only)
  std::string zip_gltf_entry;     ///< the .gltf inside a zip ("" otherwise)
  std::optional<VrmInfo> vrm;

  bool skinned = false;  ///< at least one skin (glTF) or bone (FBX)
  std::size_t skins = 0;
  std::size_t joints = 0;  ///< distinct joint nodes over all skins (FBX: distinct bone names)
  std::size_t nodes = 0;
  std::size_t meshes = 0;
  std::size_t primitives = 0;   ///< glTF primitives (FBX: meshes after Assimp's split)
  std::uint64_t vertices = 0;   ///< sum of POSITION accessor counts
  std::uint64_t triangles = 0;  ///< from index (or vertex) counts and the primitive mode
  std::size_t materials = 0;
  std::size_t textures = 0;
  std::size_t images = 0;
  std::size_t animations = 0;
  std::size_t morph_targets = 0;  ///< per mesh the largest primitive target count, summed
  std::vector<IntakeWarning> warnings;
};

struct IntakeOptions {
  /// The file name, used only for warnings (a `.vrm` without a VRM
  /// extension, a `.glb` that holds something else); detection ignores it.
  std::string name;
  /// Count FBX contents through Assimp after the header check. Off: FBX is
  /// identified from its header only (counts stay 0).
  bool use_assimp = true;
  std::size_t max_json_bytes = std::size_t{64} << 20;  ///< glTF JSON text
  std::size_t max_zip_entries = 4096;
  std::uint64_t max_zip_total_bytes = std::uint64_t{4} << 30;  ///< sum of uncompressed sizes
  std::uint64_t max_fbx_bytes = std::uint64_t{512} << 20;
  std::size_t max_count = std::size_t{1} << 20;  ///< entries of any glTF array
};

/// Inspect a model held in memory. Errors (code, location):
/// MODEL_FORMAT_UNKNOWN; GLB_TRUNCATED, GLB_VERSION, GLB_LENGTH, GLB_CHUNK_TYPE,
/// GLB_CHUNK_LENGTH, GLB_BIN_MISSING (byte offsets); JSON_* (byte offset);
/// GLTF_NOT_OBJECT, GLTF_ASSET, GLTF_VERSION, GLTF_TYPE, GLTF_INDEX, GLTF_VALUE,
/// GLTF_LENGTH, GLTF_TOO_MANY, GLTF_URI_UNSAFE, GLTF_URI_MISSING, VRM_TYPE (JSON pointers);
/// ZIP_OPEN, ZIP_TOO_MANY_ENTRIES, ZIP_TOO_LARGE, ZIP_NO_GLTF, ZIP_MANY_GLTF,
/// ZIP_READ; FBX_HEADER, FBX_TOO_LARGE, FBX_IMPORT.
core::Result<ModelInfo> inspect_model(core::Bytes bytes, const IntakeOptions& options = {});

/// Map the file and inspect it; options.name defaults to path. Adds IO_* errors.
core::Result<ModelInfo> inspect_model_file(const std::string& path, IntakeOptions options = {});

/// A model inspected and, when it is GLB or glTF JSON, loaded in the same
/// pass: what inspect_model reports and the document it surveyed, so that a
/// caller that goes on to read the glTF parses it once.
struct InspectedModel {
  ModelInfo info;
  /// The document (GLB or glTF JSON, VRM included); empty for FBX and for a
  /// glTF inside a zip (info.container says which).
  std::optional<GltfDocument> document;
};

/// inspect_model's checks, answers and errors, keeping the document. The
/// document is loaded with GltfDocument::load's defaults (no external files,
/// its byte limit) and inspect_model's JSON nesting limit; GltfDocument's
/// GLTF_LIMIT adds to inspect_model's errors.
core::Result<InspectedModel> inspect_and_load_model(core::Bytes bytes,
                                                    const IntakeOptions& options = {});

/// The required humanoid bones of a VRM version ("0.x": 17, "1.0": 15), in spec order.
const std::vector<std::string_view>& required_humanoid_bones(std::string_view vrm_version);

}  // namespace charkit::scene
