// Test support: glTF 2.0 files wrapped by hand, not by charkit's own writer —
// a buffer embedded as a base64 data: URI (glTF JSON), or the binary GLB
// container (glTF 2.0 §4.4).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace charkit::testkit {

/// RFC 4648 base64 with '=' padding.
std::string base64(std::span<const std::uint8_t> bytes);

/// A glTF buffer uri holding the bytes: "data:application/octet-stream;base64,…".
std::string gltf_data_uri(std::span<const std::uint8_t> bytes);

/// A GLB file: the 12-byte header (magic, version 2, length), the JSON chunk
/// (json_text padded with spaces) and the BIN chunk (bin padded with zeros;
/// written even when empty).
std::vector<std::uint8_t> build_glb(std::string_view json_text, std::span<const std::uint8_t> bin);

}  // namespace charkit::testkit
