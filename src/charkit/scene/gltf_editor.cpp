// GltfEditor (gltf_editor.h): appends to buffer 0 and points the document's
// elements at the new accessors; the JSON is touched only here.
#include "charkit/scene/gltf_editor.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <utility>

#include "charkit/core/base64.h"
#include "charkit/core/bytes.h"
#include "charkit/core/json.h"
#include "charkit/scene/detail/gltf_appender.h"
#include "charkit/scene/gltf_writer.h"

namespace charkit::scene {

using core::Json;

namespace {

Json attributes_json(const GltfAttributes& attributes) {
  Json out = Json::object();
  for (const GltfAttribute& a : attributes.items) out[a.semantic] = a.accessor;
  return out;
}

std::string dump(const Json& j) {
  // Replace rather than throw on strings that are not UTF-8 (names as read).
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

struct GltfEditor::Impl {
  GltfDocument* doc = nullptr;
  std::vector<std::uint8_t> bin;

  Json& root() { return doc->mutable_json(); }
  Json& primitive(std::size_t mesh, std::size_t prim) {
    return root()["meshes"][mesh]["primitives"][prim];
  }
  void align4() {
    while (bin.size() % 4 != 0) bin.push_back(0);
  }
  // Made for each append: it refers into the root, whose members may move
  // when one is added.
  detail::GltfAppender appender() {
    return detail::GltfAppender(bin, root()["bufferViews"], root()["accessors"]);
  }
  void finish_buffer() {
    align4();
    Json& r = root();
    if (!r.contains("buffers") || !r["buffers"].is_array() || r["buffers"].empty())
      r["buffers"] = Json::array({Json::object()});
    r["buffers"][0]["byteLength"] = bin.size();
  }
};

GltfEditor::GltfEditor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GltfEditor::GltfEditor(GltfEditor&&) noexcept = default;
GltfEditor& GltfEditor::operator=(GltfEditor&&) noexcept = default;
GltfEditor::~GltfEditor() = default;

core::Result<GltfEditor> GltfEditor::begin(GltfDocument& doc, const core::ErrorCode& code,
                                           OtherBuffers others) {
  const auto& buffers = doc.asset().buffers;
  if (buffers.size() > 1 && others == OtherBuffers::kRefuse)
    return core::error_at_pointer(
        code,
        "files with several buffers are not supported: merge them into one (e.g. save as GLB)",
        "/buffers");
  auto impl = std::make_unique<Impl>();
  impl->doc = &doc;
  if (!buffers.empty()) {
    auto b0 = doc.buffer(0);
    if (!b0) return std::move(b0).error();
    impl->bin.assign(b0->begin(), b0->end());
  }
  // Both arrays exist before any reference into the root is taken: adding a
  // member later could move the root's members (an ordered_json is a vector).
  Json& root = doc.mutable_json();
  for (const char* key : {"accessors", "bufferViews"})
    if (!root.contains(key)) root[key] = Json::array();
  return GltfEditor(std::move(impl));
}

const GltfAsset& GltfEditor::asset() const {
  return impl_->doc->asset();
}
GltfDocument& GltfEditor::document() {
  return *impl_->doc;
}
std::uint64_t GltfEditor::buffer_size() const {
  return impl_->bin.size();
}

std::size_t GltfEditor::append_floats(std::span<const float> values, std::size_t components,
                                      bool bounds, GltfViewUse use) {
  return impl_->appender().floats(values, components, bounds, use);
}

std::size_t GltfEditor::append_uints(std::span<const std::uint32_t> values, std::size_t components,
                                     GltfViewUse use, std::optional<GltfComponent> component) {
  return impl_->appender().uints(values, components, use, component);
}

void GltfEditor::set_attribute(std::size_t mesh, std::size_t prim, std::string_view semantic,
                               std::size_t accessor) {
  impl_->primitive(mesh, prim)["attributes"][std::string(semantic)] = accessor;
}

void GltfEditor::set_attributes(std::size_t mesh, std::size_t prim,
                                const GltfAttributes& attributes) {
  impl_->primitive(mesh, prim)["attributes"] = attributes_json(attributes);
}

void GltfEditor::set_indices(std::size_t mesh, std::size_t prim, std::size_t accessor) {
  impl_->primitive(mesh, prim)["indices"] = accessor;
}

void GltfEditor::set_targets(std::size_t mesh, std::size_t prim,
                             const std::vector<GltfAttributes>& targets) {
  Json& p = impl_->primitive(mesh, prim);
  if (targets.empty()) {
    p.erase("targets");
    return;
  }
  Json list = Json::array();
  for (const GltfAttributes& t : targets) list.push_back(attributes_json(t));
  p["targets"] = std::move(list);
}

void GltfEditor::add_target(std::size_t mesh, std::size_t prim, const GltfAttributes& target) {
  Json& p = impl_->primitive(mesh, prim);
  if (!p.contains("targets")) p["targets"] = Json::array();
  p["targets"].push_back(attributes_json(target));
}

void GltfEditor::set_target_names(std::size_t mesh, const std::vector<std::string>& names) {
  Json& m = impl_->root()["meshes"][mesh];
  if (!m.contains("extras") || !m["extras"].is_object()) m["extras"] = Json::object();
  m["extras"]["targetNames"] = names;
}

void GltfEditor::set_mesh_weights(std::size_t mesh, const std::vector<double>& weights) {
  impl_->root()["meshes"][mesh]["weights"] = weights;
}

void GltfEditor::set_node_weights(std::size_t node, const std::vector<double>& weights) {
  impl_->root()["nodes"][node]["weights"] = weights;
}

void GltfEditor::set_sampler_output(std::size_t anim, std::size_t sampler, std::size_t accessor) {
  impl_->root()["animations"][anim]["samplers"][sampler]["output"] = accessor;
}

core::Result<std::vector<std::uint8_t>> GltfEditor::finish_glb() {
  Impl& m = *impl_;
  m.finish_buffer();
  m.root()["buffers"][0].erase("uri");
  return assemble_glb(dump(m.root()), std::move(m.bin));
}

std::string GltfEditor::finish_gltf_embedded() {
  Impl& m = *impl_;
  m.finish_buffer();
  m.root()["buffers"][0]["uri"] =
      "data:application/octet-stream;base64," + core::base64_encode(m.bin);
  m.bin.clear();
  return dump(m.root());
}

}  // namespace charkit::scene
