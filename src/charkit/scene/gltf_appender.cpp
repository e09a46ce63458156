// detail::GltfAppender (detail/gltf_appender.h): bytes, bufferViews and
// accessors appended with the glTF layer's layout rules.
#include "charkit/scene/detail/gltf_appender.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "charkit/core/bytes.h"
#include "charkit/core/json.h"

namespace charkit::scene::detail {

using core::Json;

namespace {

std::optional<std::uint32_t> view_target(GltfViewUse use) {
  switch (use) {
    case GltfViewUse::kVertices:
      return 34962;  // ARRAY_BUFFER
    case GltfViewUse::kIndices:
      return 34963;  // ELEMENT_ARRAY_BUFFER
    case GltfViewUse::kOther:
      break;
  }
  return std::nullopt;
}

const char* type_name(std::size_t components) {
  switch (components) {
    case 1:
      return "SCALAR";
    case 2:
      return "VEC2";
    case 3:
      return "VEC3";
    case 16:
      return "MAT4";
    default:
      return "VEC4";
  }
}

}  // namespace

std::size_t GltfAppender::view(const void* data, std::size_t size, GltfViewUse use) {
  pad();
  const std::size_t offset = bin_.size();
  bin_.resize(offset + size);
  if (size != 0) std::memcpy(bin_.data() + offset, data, size);
  Json v{{"buffer", 0}, {"byteOffset", offset}, {"byteLength", size}};
  if (auto target = view_target(use)) v["target"] = *target;
  views_.push_back(std::move(v));
  return views_.size() - 1;
}

std::size_t GltfAppender::accessor(Json a) {
  accessors_.push_back(std::move(a));
  return accessors_.size() - 1;
}

std::size_t GltfAppender::floats(std::span<const float> values, std::size_t components, bool bounds,
                                 GltfViewUse use) {
  // Little-endian IEEE 754 in the buffer (glTF 2.0 §3.6.2.2).
  std::vector<std::uint8_t> bytes;
  bytes.reserve(4 * values.size());
  for (float f : values) core::append_le(bytes, std::bit_cast<std::uint32_t>(f));
  Json a{{"bufferView", view(bytes.data(), bytes.size(), use)},
         {"componentType", static_cast<std::uint32_t>(GltfComponent::kFloat)},
         {"count", values.size() / components},
         {"type", type_name(components)}};
  if (bounds && !values.empty()) {
    Json lo = Json::array();
    Json hi = Json::array();
    for (std::size_t c = 0; c < components; ++c) {
      float mn = std::numeric_limits<float>::infinity();
      float mx = -mn;
      for (std::size_t i = c; i < values.size(); i += components) {
        mn = std::min(mn, values[i]);
        mx = std::max(mx, values[i]);
      }
      lo.push_back(static_cast<double>(mn));
      hi.push_back(static_cast<double>(mx));
    }
    a["min"] = std::move(lo);
    a["max"] = std::move(hi);
  }
  return accessor(std::move(a));
}

std::size_t GltfAppender::uints(std::span<const std::uint32_t> values, std::size_t components,
                                GltfViewUse use, std::optional<GltfComponent> component) {
  if (!component) {
    // 65535 is primitive restart in an UNSIGNED_SHORT index list (glTF 2.0 §3.7.2.1).
    const bool shorts =
        std::all_of(values.begin(), values.end(), [](std::uint32_t v) { return v < 0xFFFFU; });
    component = shorts ? GltfComponent::kUnsignedShort : GltfComponent::kUnsignedInt;
  }
  std::vector<std::uint8_t> bytes;
  bytes.reserve(gltf_component_size(*component) * values.size());
  for (std::uint32_t v : values) {
    if (*component == GltfComponent::kUnsignedByte)
      bytes.push_back(static_cast<std::uint8_t>(v));
    else if (*component == GltfComponent::kUnsignedShort)
      core::append_le(bytes, static_cast<std::uint16_t>(v));
    else
      core::append_le(bytes, v);
  }
  return accessor(Json{{"bufferView", view(bytes.data(), bytes.size(), use)},
                       {"componentType", static_cast<std::uint32_t>(*component)},
                       {"count", values.size() / components},
                       {"type", type_name(components)}});
}

}  // namespace charkit::scene::detail
