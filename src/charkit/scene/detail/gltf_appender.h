// The one way data is added to a glTF buffer (internal to the glTF layer):
// GltfEditor (appending to a loaded document) and the writer (building a new
// one) both go through it, so both keep the same layout rules
// (docs/scene.md): every bufferView starts on a multiple of 4, one
// bufferView per accessor, no byteStride, index lists as UNSIGNED_SHORT when
// every value is below 65535.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/scene/gltf_asset.h"
#include "charkit/scene/gltf_editor.h"

namespace charkit::scene::detail {

class GltfAppender {
 public:
  /// Appends to `bin` and to the JSON arrays `views` and `accessors` (which
  /// must stay where they are while the appender is used).
  GltfAppender(std::vector<std::uint8_t>& bin, core::Json& views, core::Json& accessors)
      : bin_(bin), views_(views), accessors_(accessors) {}

  /// A bufferView over `size` bytes copied to the buffer (4-aligned start).
  std::size_t view(const void* data, std::size_t size, GltfViewUse use);

  /// FLOAT accessor of `components` per element: 1 to 4 (SCALAR … VEC4) or
  /// 16 (MAT4); min and max when `bounds`.
  std::size_t floats(std::span<const float> values, std::size_t components, bool bounds,
                     GltfViewUse use);
  /// Unsigned integers, `component` or the narrowest of UNSIGNED_SHORT (every
  /// value below 65535) and UNSIGNED_INT.
  std::size_t uints(std::span<const std::uint32_t> values, std::size_t components, GltfViewUse use,
                    std::optional<GltfComponent> component);

  void pad() {
    while (bin_.size() % 4 != 0) bin_.push_back(0);
  }

 private:
  std::size_t accessor(core::Json a);

  std::vector<std::uint8_t>& bin_;
  core::Json& views_;
  core::Json& accessors_;
};

}  // namespace charkit::scene::detail
