// glTF 2.0 writer: a Scene as one GLB file (JSON chunk + BIN chunk with every
// vertex array, index list, inverse bind matrix and PNG image), or as a
// .gltf JSON text plus a .bin buffer. Output is deterministic: the same scene
// gives the same bytes. Layout guarantees (docs/scene.md):
//  - every bufferView starts at a multiple of 4 in the buffer, accessors have
//    byteOffset 0, so every accessor is aligned to its component size;
//  - one bufferView per accessor, so no byteStride is written;
//  - POSITION accessors carry min and max; indices use UNSIGNED_SHORT when
//    every index fits below 65535, else UNSIGNED_INT (the maximum value of the
//    type is never used, glTF 2.0 §3.7.2.1 primitive restart);
//  - the JSON chunk is padded with spaces, the BIN chunk with zeros, and the
//    header length is the length of the whole file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/scene.h"

namespace charkit::scene {

struct GltfOptions {
  std::string generator = "charkit";
};

/// Checks every reference and count of a scene the writer relies on.
/// Error codes: SCENE_MESH_*, SCENE_NODE_*, SCENE_SKELETON_*, SCENE_MATERIAL_*,
/// SCENE_TEXTURE_*, SCENE_IMAGE_*; the location is a JSON pointer into the
/// scene's structure (e.g. "/meshes/0/primitives/1").
core::Status validate_scene(const Scene& scene);

/// The scene as a GLB file. Fails (validate_scene's errors, or SCENE_TOO_LARGE
/// when the file would exceed the 4 GiB GLB limit) without partial output.
core::Result<std::vector<std::uint8_t>> write_glb(const Scene& scene,
                                                  const GltfOptions& options = {});

/// A GLB container (glTF 2.0 §4.4) of a JSON text and a BIN chunk (none when
/// `bin` is empty): the JSON padded with spaces, the BIN with zeros, the
/// header length that of the whole file. The one GLB assembler: write_glb and
/// the writers that edit a loaded document (shape-key baking, `deform morph`)
/// use it. Fails with SCENE_TOO_LARGE past 4 GiB.
core::Result<std::vector<std::uint8_t>> assemble_glb(std::string json,
                                                     std::vector<std::uint8_t> bin);

struct GltfFiles {
  std::string json;               ///< the .gltf document
  std::vector<std::uint8_t> bin;  ///< the buffer that json's buffers[0].uri names
};

/// The scene as .gltf text whose buffer lives in a file named `bin_uri`
/// (a relative URI, written as given).
core::Result<GltfFiles> write_gltf(const Scene& scene, const std::string& bin_uri,
                                   const GltfOptions& options = {});

}  // namespace charkit::scene
