#include <bit>
#include <limits>

#include "charkit/scene/gltf_edit.h"
#include "charkit/scene/gltf_writer.h"

namespace charkit::scene {

using core::Json;

namespace {

template <typename T>
void put_le(std::vector<std::uint8_t>& b, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// A new bufferView of `bytes` bytes at the end of bin (4-aligned).
std::size_t new_view(Json& root, std::vector<std::uint8_t>& bin, std::size_t offset,
                     std::size_t bytes, int target) {
  if (!root.contains("bufferViews")) root["bufferViews"] = Json::array();
  root["bufferViews"].push_back(
      Json{{"buffer", 0}, {"byteOffset", offset}, {"byteLength", bytes}, {"target", target}});
  (void)bin;
  return root["bufferViews"].size() - 1;
}

void align4(std::vector<std::uint8_t>& bin) {
  while (bin.size() % 4 != 0) bin.push_back(0);
}

}  // namespace

core::Result<std::vector<std::uint8_t>> begin_edit(GltfDocument& doc, const core::ErrorCode& code) {
  if (doc.count("buffers") > 1)
    return core::error_at_pointer(
        code,
        "files with several buffers are not supported: merge them into one (e.g. save as GLB)",
        "/buffers");
  std::vector<std::uint8_t> bin;
  if (doc.count("buffers") == 1) {
    auto b0 = doc.buffer(0);
    if (!b0) return std::move(b0).error();
    bin.assign(b0->begin(), b0->end());
  }
  Json& root = doc.json();
  for (const char* key : {"accessors", "bufferViews"})
    if (!root.contains(key) || !root[key].is_array()) root[key] = Json::array();
  return bin;
}

std::optional<std::size_t> gltf_index_member(const Json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::size_t>();
}

core::Result<std::vector<float>> read_float_attribute(GltfDocument& doc, std::size_t accessor,
                                                      std::size_t components, std::size_t count,
                                                      const core::ErrorCode& code,
                                                      const std::string& pointer) {
  auto info = doc.accessor(accessor);
  if (!info) return std::move(info).error();
  if (info->components != components || (count != 0 && info->count != count))
    return core::error_at_pointer(code,
                                  "accessor " + std::to_string(accessor) + " is " + info->type +
                                      " × " + std::to_string(info->count) + ", expected " +
                                      std::to_string(components) + " components × " +
                                      std::to_string(count),
                                  pointer);
  return doc.read_accessor_floats(accessor);
}

std::size_t append_float_accessor(Json& root, std::vector<std::uint8_t>& bin,
                                  const std::vector<float>& values, std::size_t components,
                                  const char* type, bool bounds) {
  align4(bin);
  const std::size_t offset = bin.size();
  for (float f : values) put_le(bin, std::bit_cast<std::uint32_t>(f));
  const std::size_t view = new_view(root, bin, offset, values.size() * 4, 34962);
  Json acc{{"bufferView", view},
           {"componentType", 5126},
           {"count", values.size() / components},
           {"type", type}};
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
      lo.push_back(mn);
      hi.push_back(mx);
    }
    acc["min"] = std::move(lo);
    acc["max"] = std::move(hi);
  }
  root["accessors"].push_back(std::move(acc));
  return root["accessors"].size() - 1;
}

std::size_t append_uint_accessor(Json& root, std::vector<std::uint8_t>& bin,
                                 const std::vector<std::uint32_t>& values, std::size_t components,
                                 const char* type, bool index_target) {
  align4(bin);
  const std::size_t offset = bin.size();
  bool shorts = true;
  for (std::uint32_t v : values) shorts = shorts && v < 0xFFFFU;
  for (std::uint32_t v : values) {
    if (shorts)
      put_le(bin, static_cast<std::uint16_t>(v));
    else
      put_le(bin, v);
  }
  const std::size_t bytes = values.size() * (shorts ? 2 : 4);
  const std::size_t view = new_view(root, bin, offset, bytes, index_target ? 34963 : 34962);
  root["accessors"].push_back(Json{{"bufferView", view},
                                   {"componentType", shorts ? 5123 : 5125},
                                   {"count", values.size() / components},
                                   {"type", type}});
  return root["accessors"].size() - 1;
}

core::Result<std::vector<std::uint8_t>> finish_glb(Json& root, std::vector<std::uint8_t> bin) {
  align4(bin);
  if (!root.contains("buffers") || !root["buffers"].is_array() || root["buffers"].empty())
    root["buffers"] = Json::array({Json::object()});
  root["buffers"][0]["byteLength"] = bin.size();
  root["buffers"][0].erase("uri");
  return assemble_glb(root.dump(-1, ' ', false, Json::error_handler_t::replace), std::move(bin));
}

}  // namespace charkit::scene
