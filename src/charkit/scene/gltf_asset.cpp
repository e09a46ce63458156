// read_gltf_asset (gltf_asset.h): the typed elements of a glTF 2.0 JSON root,
// every member type-checked and every index range-checked once.
#include "charkit/scene/gltf_asset.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "charkit/core/enum_names.h"
#include "charkit/core/json.h"
#include "charkit/scene/error_codes.h"

namespace charkit::scene {

using core::Json;

std::size_t gltf_component_size(GltfComponent c) {
  switch (c) {
    case GltfComponent::kByte:
    case GltfComponent::kUnsignedByte:
      return 1;
    case GltfComponent::kShort:
    case GltfComponent::kUnsignedShort:
      return 2;
    case GltfComponent::kUnsignedInt:
    case GltfComponent::kFloat:
      return 4;
  }
  return 0;
}

std::optional<std::size_t> GltfAttributes::find(std::string_view semantic) const {
  for (const GltfAttribute& a : items)
    if (a.semantic == semantic) return a.accessor;
  return std::nullopt;
}

std::string GltfMesh::target_name(std::size_t i) const {
  if (i < target_names.size()) return target_names[i];
  if (target_names.empty() && !primitives.empty() && i < primitives.front().target_names.size())
    return primitives.front().target_names[i];
  return "target_" + std::to_string(i);
}

std::vector<std::size_t> GltfAsset::nodes_of_mesh(std::size_t m) const {
  std::vector<std::size_t> out;
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n].mesh == m) out.push_back(n);
  return out;
}

namespace {

// The names glTF 2.0 and the VRM extensions give their enumerations.
constexpr core::EnumNames<GltfAlphaMode, 3> kAlphaModes{{{{GltfAlphaMode::kOpaque, "OPAQUE"},
                                                          {GltfAlphaMode::kMask, "MASK"},
                                                          {GltfAlphaMode::kBlend, "BLEND"}}}};
constexpr core::EnumNames<GltfInterpolation, 3> kInterpolations{
    {{{GltfInterpolation::kLinear, "LINEAR"},
      {GltfInterpolation::kStep, "STEP"},
      {GltfInterpolation::kCubicSpline, "CUBICSPLINE"}}}};
constexpr core::EnumNames<MToonOutlineWidthMode, 3> kOutlineWidthModes{
    {{{MToonOutlineWidthMode::kNone, "none"},
      {MToonOutlineWidthMode::kWorldCoordinates, "worldCoordinates"},
      {MToonOutlineWidthMode::kScreenCoordinates, "screenCoordinates"}}}};
constexpr core::EnumNames<VrmOverride, 3> kOverrides{{{{VrmOverride::kNone, "none"},
                                                       {VrmOverride::kBlock, "block"},
                                                       {VrmOverride::kBlend, "blend"}}}};

bool type_components(std::string_view type, std::size_t& components) {
  static constexpr std::pair<std::string_view, std::size_t> kTypes[] = {
      {"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT2", 4}, {"MAT3", 9}, {"MAT4", 16}};
  for (const auto& [name, n] : kTypes)
    if (type == name) {
      components = n;
      return true;
    }
  return false;
}

bool valid_component(std::uint64_t v) {
  return v == 5120 || v == 5121 || v == 5122 || v == 5123 || v == 5125 || v == 5126;
}

// Reads members of one element after another; the first error is kept and
// every later read returns a default, so the element readers stay linear.
class Reader {
 public:
  explicit Reader(const Json& root) : root_(root) {}

  bool failed() const { return error_.has_value(); }
  core::Error take_error() { return std::move(*error_); }

  void fail(core::ErrorCode code, std::string message, std::string pointer) {
    if (!error_)
      error_ = core::Error{code, std::move(message), core::Location::at_pointer(pointer)};
  }

  // The elements of an array member (none when absent).
  const Json* array(const Json& obj, const std::string& ptr, const char* key) {
    return member(obj, ptr, key, Json::value_t::array, "an array");
  }
  const Json* object(const Json& obj, const std::string& ptr, const char* key) {
    return member(obj, ptr, key, Json::value_t::object, "an object");
  }
  // obj[key] when it has JSON type `type`; absent: null; else GLTF_TYPE.
  const Json* member(const Json& obj, const std::string& ptr, const char* key, Json::value_t type,
                     const char* what) {
    auto it = obj.find(key);
    if (it == obj.end()) return nullptr;
    if (it->type() != type) {
      fail(codes::GLTF_TYPE,
           std::string(key) + " must be " + what + ", not " + core::json_type_name(*it),
           core::json_pointer_join(ptr, key));
      return nullptr;
    }
    return &*it;
  }
  bool is_object(const Json& j, const std::string& ptr, const char* what) {
    if (j.is_object()) return true;
    fail(codes::GLTF_TYPE, std::string(what) + " must be an object, not " + core::json_type_name(j),
         ptr);
    return false;
  }
  std::string string(const Json& obj, const std::string& ptr, const char* key) {
    auto s = optional_string(obj, ptr, key);
    return s ? *s : std::string();
  }
  std::optional<std::string> optional_string(const Json& obj, const std::string& ptr,
                                             const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    if (!it->is_string()) {
      fail(codes::GLTF_TYPE, std::string(key) + " must be a string",
           core::json_pointer_join(ptr, key));
      return std::nullopt;
    }
    return it->get<std::string>();
  }
  // An optional string member naming one of `names`' values, stored in
  // `out`; `code` when it names none (the message lists the names).
  template <typename E, std::size_t N>
  void enum_member(const Json& obj, const std::string& ptr, const char* key,
                   const core::EnumNames<E, N>& names, core::ErrorCode code, E& out) {
    auto s = optional_string(obj, ptr, key);
    if (!s) return;
    if (auto v = names.parse(*s)) {
      out = *v;
      return;
    }
    std::string list;
    for (const auto& entry : names.entries)
      list += (list.empty()                    ? ""
               : entry == names.entries.back() ? " or "
                                               : ", ") +
              std::string(entry.second);
    fail(code, std::string(key) + " must be " + list + ", not " + *s,
         core::json_pointer_join(ptr, key));
  }
  std::optional<std::uint64_t> uint(const Json& obj, const std::string& ptr, const char* key,
                                    bool required = false) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required)
        fail(codes::GLTF_VALUE, std::string(key) + " is required",
             core::json_pointer_join(ptr, key));
      return std::nullopt;
    }
    auto v = core::json_uint32(*it);
    if (!v) {
      fail(codes::GLTF_TYPE, std::string(key) + " must be an integer in 0..2^32-1",
           core::json_pointer_join(ptr, key));
      return std::nullopt;
    }
    return *v;
  }
  // An index member into an array of `size` elements named `what`.
  std::optional<std::size_t> index(const Json& obj, const std::string& ptr, const char* key,
                                   std::size_t size, const char* what, bool required = false) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required)
        fail(codes::GLTF_VALUE, std::string(key) + " is required",
             core::json_pointer_join(ptr, key));
      return std::nullopt;
    }
    return index_value(*it, core::json_pointer_join(ptr, key), size, what);
  }
  std::optional<std::size_t> index_value(const Json& j, const std::string& ptr, std::size_t size,
                                         const char* what) {
    auto v = core::json_uint32(j);
    if (!v) {
      fail(codes::GLTF_TYPE, std::string("index of ") + what + " must be an integer >= 0", ptr);
      return std::nullopt;
    }
    if (*v >= size) {
      fail(codes::GLTF_INDEX,
           "index " + std::to_string(*v) + " is out of range: " + std::to_string(size) + " " + what,
           ptr);
      return std::nullopt;
    }
    return std::size_t{*v};
  }
  std::optional<double> number(const Json& obj, const std::string& ptr, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    auto v = core::json_finite_number(*it);
    if (!v) {
      fail(codes::GLTF_TYPE, std::string(key) + " must be a finite number",
           core::json_pointer_join(ptr, key));
      return std::nullopt;
    }
    return v;
  }
  bool boolean(const Json& obj, const std::string& ptr, const char* key, bool fallback) {
    auto it = obj.find(key);
    if (it == obj.end()) return fallback;
    if (!it->is_boolean()) {
      fail(codes::GLTF_TYPE, std::string(key) + " must be true or false",
           core::json_pointer_join(ptr, key));
      return fallback;
    }
    return it->get<bool>();
  }
  // An array of finite numbers; `exact` elements when not 0.
  std::optional<std::vector<double>> numbers(const Json& obj, const std::string& ptr,
                                             const char* key, std::size_t exact = 0) {
    const Json* a = array(obj, ptr, key);
    if (a == nullptr) return std::nullopt;
    const std::string p = core::json_pointer_join(ptr, key);
    if (exact != 0 && a->size() != exact) {
      fail(codes::GLTF_VALUE,
           std::string(key) + " must hold " + std::to_string(exact) + " numbers, not " +
               std::to_string(a->size()),
           p);
      return std::nullopt;
    }
    std::vector<double> out;
    out.reserve(a->size());
    for (std::size_t i = 0; i < a->size(); ++i) {
      auto v = core::json_finite_number((*a)[i]);
      if (!v) {
        fail(codes::GLTF_TYPE, "a finite number is needed", core::json_pointer_join(p, i));
        return std::nullopt;
      }
      out.push_back(*v);
    }
    return out;
  }
  template <std::size_t N>
  void fixed(const Json& obj, const std::string& ptr, const char* key, std::array<double, N>& out) {
    if (auto v = numbers(obj, ptr, key, N))
      for (std::size_t i = 0; i < N; ++i) out[i] = (*v)[i];
  }
  std::vector<std::string> strings(const Json& obj, const std::string& ptr, const char* key) {
    std::vector<std::string> out;
    const Json* a = array(obj, ptr, key);
    if (a == nullptr) return out;
    const std::string p = core::json_pointer_join(ptr, key);
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_string()) {
        fail(codes::GLTF_TYPE, "a string is needed", core::json_pointer_join(p, i));
        return {};
      }
      out.push_back((*a)[i].get<std::string>());
    }
    return out;
  }
  // extras.targetNames of a mesh or primitive (other extras are left alone).
  std::vector<std::string> target_names(const Json& holder, const std::string& ptr) {
    auto it = holder.find("extras");
    if (it == holder.end() || !it->is_object()) return {};
    return strings(*it, core::json_pointer_join(ptr, "extras"), "targetNames");
  }
  GltfExtras extras(const Json& holder) {
    auto it = holder.find("extras");
    if (it == holder.end() || !it->is_object()) return nullptr;
    return std::make_shared<const Json>(*it);
  }
  std::vector<std::string> extension_names(const Json& holder, const std::string& ptr) {
    std::vector<std::string> out;
    if (const Json* ext = object(holder, ptr, "extensions"))
      for (const auto& [name, value] : ext->items()) out.push_back(name);
    return out;
  }

  // Each top-level array, read with `element(json, pointer, index)`.
  template <typename T, typename F>
  std::vector<T> each(const char* key, F&& element) {
    std::vector<T> out;
    const Json* a = array(root_, "", key);
    if (a == nullptr) return out;
    out.reserve(a->size());
    for (std::size_t i = 0; i < a->size() && !failed(); ++i) {
      const std::string p = core::json_pointer_join(std::string("/") + key, i);
      T t;
      t.pointer = p;
      if (is_object((*a)[i], p, ("an element of " + std::string(key)).c_str()))
        element((*a)[i], p, t);
      out.push_back(std::move(t));
    }
    return out;
  }

  std::size_t count(const char* key) {
    const Json* a = array(root_, "", key);
    return a == nullptr ? 0 : a->size();
  }

 private:
  const Json& root_;
  std::optional<core::Error> error_;
};

void read_attributes(Reader& r, const Json& obj, const std::string& ptr, std::size_t accessors,
                     GltfAttributes& out) {
  for (const auto& [semantic, value] : obj.items()) {
    auto a = r.index_value(value, core::json_pointer_join(ptr, semantic), accessors, "accessors");
    if (!a) return;
    out.items.push_back({semantic, *a});
  }
}

void read_accessor(Reader& r, const Json& a, const std::string& p, std::size_t views,
                   GltfAccessor& info) {
  auto type = a.find("type");
  if (type == a.end() || !type->is_string() ||
      !type_components(type->get_ref<const std::string&>(), info.components)) {
    r.fail(codes::GLTF_ACCESSOR, "type must be SCALAR, VEC2, VEC3, VEC4, MAT2, MAT3 or MAT4",
           p + "/type");
    return;
  }
  info.type = type->get<std::string>();
  auto ct = a.find("componentType");
  if (ct == a.end() || !core::json_uint32(*ct)) {
    r.fail(codes::GLTF_ACCESSOR, "componentType must be an unsigned integer", p + "/componentType");
    return;
  }
  if (!valid_component(ct->get<std::uint64_t>())) {
    r.fail(codes::GLTF_ACCESSOR,
           "unknown componentType " + std::to_string(ct->get<std::uint64_t>()),
           p + "/componentType");
    return;
  }
  info.component_type = static_cast<GltfComponent>(ct->get<std::uint32_t>());
  if (auto it = a.find("normalized"); it != a.end()) {
    if (!it->is_boolean()) {
      r.fail(codes::GLTF_ACCESSOR, "normalized must be true or false", p + "/normalized");
      return;
    }
    info.normalized = it->get<bool>();
    if (info.normalized && (info.component_type == GltfComponent::kFloat ||
                            info.component_type == GltfComponent::kUnsignedInt)) {
      r.fail(codes::GLTF_ACCESSOR, "only (unsigned) byte and short accessors can be normalized",
             p + "/normalized");
      return;
    }
  }
  auto n = a.find("count");
  if (n == a.end() || !core::json_uint32(*n)) {
    r.fail(codes::GLTF_ACCESSOR,
           n == a.end() ? "count is missing" : "count must be an unsigned integer", p + "/count");
    return;
  }
  info.count = n->get<std::uint64_t>();
  if (auto it = a.find("bufferView"); it != a.end()) {
    auto v = core::json_uint32(*it);
    if (!v || *v >= views) {
      r.fail(codes::GLTF_ACCESSOR,
             "bufferView " + it->dump() + " is not one of the " + std::to_string(views) +
                 " bufferViews",
             p + "/bufferView");
      return;
    }
    info.buffer_view = *v;
  }
  if (auto it = a.find("byteOffset"); it != a.end()) {
    auto v = core::json_uint32(*it);
    if (!v) {
      r.fail(codes::GLTF_ACCESSOR, "byteOffset must be an unsigned integer", p + "/byteOffset");
      return;
    }
    info.byte_offset = *v;
  }
  info.sparse = a.contains("sparse");
  // min and max are advisory; a reader that needs them checks their length.
  if (auto v = r.numbers(a, p, "min")) info.min = std::move(*v);
  if (auto v = r.numbers(a, p, "max")) info.max = std::move(*v);
  info.name = r.string(a, p, "name");
}

void read_buffer_view(Reader& r, const Json& v, const std::string& p, std::size_t buffers,
                      GltfBufferView& view) {
  const auto bad = [&](const char* key, const std::string& why) {
    r.fail(codes::GLTF_BUFFER_VIEW, std::string(key) + " " + why, p + "/" + key);
  };
  auto b = v.find("buffer");
  if (b == v.end() || !core::json_uint32(*b) || b->get<std::uint64_t>() >= buffers)
    return bad("buffer", "must be the index of one of the " + std::to_string(buffers) + " buffers");
  view.buffer = b->get<std::size_t>();
  auto len = v.find("byteLength");
  if (len == v.end() || !core::json_uint32(*len))
    return bad("byteLength", "must be an unsigned integer");
  view.byte_length = len->get<std::uint64_t>();
  if (auto it = v.find("byteOffset"); it != v.end()) {
    if (!core::json_uint32(*it)) return bad("byteOffset", "must be an unsigned integer");
    view.byte_offset = it->get<std::uint64_t>();
  }
  if (auto it = v.find("byteStride"); it != v.end()) {
    if (!core::json_uint32(*it)) return bad("byteStride", "must be an unsigned integer");
    view.byte_stride = it->get<std::uint64_t>();
  }
  if (auto t = r.uint(v, p, "target")) view.target = static_cast<std::uint32_t>(*t);
}

void read_primitive(Reader& r, const Json& j, const std::string& p, const GltfAsset& a,
                    std::size_t materials, GltfPrimitive& prim) {
  prim.pointer = p;
  const Json* attrs = r.object(j, p, "attributes");
  if (attrs == nullptr) {
    if (!r.failed()) r.fail(codes::GLTF_VALUE, "attributes is required", p + "/attributes");
    return;
  }
  read_attributes(r, *attrs, p + "/attributes", a.accessors.size(), prim.attributes);
  prim.indices = r.index(j, p, "indices", a.accessors.size(), "accessors");
  prim.material = r.index(j, p, "material", materials, "materials");
  if (auto m = r.uint(j, p, "mode")) {
    if (*m > 6) r.fail(codes::GLTF_VALUE, "mode must be 0 to 6", p + "/mode");
    prim.mode = static_cast<std::uint32_t>(*m);
  }
  if (const Json* targets = r.array(j, p, "targets")) {
    for (std::size_t t = 0; t < targets->size() && !r.failed(); ++t) {
      const std::string tp = core::json_pointer_join(p + "/targets", t);
      GltfAttributes target;
      if (r.is_object((*targets)[t], tp, "a morph target"))
        read_attributes(r, (*targets)[t], tp, a.accessors.size(), target);
      prim.targets.push_back(std::move(target));
    }
  }
  prim.target_names = r.target_names(j, p);
}

void read_mesh(Reader& r, const Json& j, const std::string& p, const GltfAsset& a,
               std::size_t materials, GltfMesh& mesh) {
  mesh.name = r.string(j, p, "name");
  const Json* prims = r.array(j, p, "primitives");
  if (prims == nullptr || prims->empty()) {
    if (!r.failed())
      r.fail(codes::GLTF_VALUE, "a mesh needs at least one primitive", p + "/primitives");
    return;
  }
  for (std::size_t i = 0; i < prims->size() && !r.failed(); ++i) {
    const std::string pp = core::json_pointer_join(p + "/primitives", i);
    GltfPrimitive prim;
    if (r.is_object((*prims)[i], pp, "a primitive"))
      read_primitive(r, (*prims)[i], pp, a, materials, prim);
    if (!r.failed() && !mesh.primitives.empty() &&
        prim.targets.size() != mesh.primitives.front().targets.size())
      r.fail(codes::GLTF_VALUE,
             "primitives have different morph target counts (" +
                 std::to_string(mesh.primitives.front().targets.size()) + " and " +
                 std::to_string(prim.targets.size()) + ")",
             pp + "/targets");
    mesh.primitives.push_back(std::move(prim));
  }
  if (auto w = r.numbers(j, p, "weights")) {
    mesh.weights = std::move(*w);
    if (!r.failed() && mesh.weights.size() != mesh.target_count())
      r.fail(codes::GLTF_VALUE,
             "weights holds " + std::to_string(mesh.weights.size()) + " values for " +
                 std::to_string(mesh.target_count()) + " morph targets",
             p + "/weights");
  }
  mesh.target_names = r.target_names(j, p);
  mesh.extras = r.extras(j);
}

void read_node(Reader& r, const Json& j, const std::string& p, std::size_t nodes,
               std::size_t meshes, std::size_t skins, std::size_t cameras, GltfNode& node) {
  node.name = r.string(j, p, "name");
  if (const Json* children = r.array(j, p, "children"))
    for (std::size_t i = 0; i < children->size() && !r.failed(); ++i)
      if (auto c = r.index_value((*children)[i], core::json_pointer_join(p + "/children", i), nodes,
                                 "nodes"))
        node.children.push_back(*c);
  node.mesh = r.index(j, p, "mesh", meshes, "meshes");
  node.skin = r.index(j, p, "skin", skins, "skins");
  node.camera = r.index(j, p, "camera", cameras, "cameras");
  if (j.contains("matrix")) {
    std::array<double, 16> m{};
    r.fixed(j, p, "matrix", m);
    node.matrix = m;
    for (const char* trs : {"translation", "rotation", "scale"})
      if (j.contains(trs) && !r.failed())
        r.fail(codes::GLTF_VALUE, std::string("a node with a matrix may not have ") + trs,
               p + "/" + trs);
  }
  r.fixed(j, p, "translation", node.translation);
  r.fixed(j, p, "rotation", node.rotation);
  r.fixed(j, p, "scale", node.scale);
  if (auto w = r.numbers(j, p, "weights")) node.weights = std::move(*w);
  node.extras = r.extras(j);
}

std::optional<GltfTextureRef> texture_ref(Reader& r, const Json& holder, const std::string& p,
                                          const char* key, std::size_t textures,
                                          const char* scale_key) {
  const Json* t = r.object(holder, p, key);
  if (t == nullptr) return std::nullopt;
  const std::string tp = core::json_pointer_join(p, key);
  auto index = r.index(*t, tp, "index", textures, "textures", true);
  if (!index) return std::nullopt;
  GltfTextureRef ref;
  ref.texture = *index;
  if (auto c = r.uint(*t, tp, "texCoord")) ref.tex_coord = static_cast<std::uint32_t>(*c);
  if (scale_key != nullptr)
    if (auto s = r.number(*t, tp, scale_key)) ref.scale = *s;
  return ref;
}

// VRMC_materials_mtoon 1.0: factors (the schema's defaults when absent),
// texture references checked like the core ones, the outline width mode one
// of the schema's three.
GltfMToon read_mtoon(Reader& r, const Json& j, const std::string& p, std::size_t textures) {
  GltfMToon t;
  t.spec_version = r.string(j, p, "specVersion");
  t.transparent_with_z_write = r.boolean(j, p, "transparentWithZWrite", false);
  if (auto q = r.number(j, p, "renderQueueOffsetNumber")) {
    if (*q != std::floor(*q) || *q < -9 || *q > 9)
      r.fail(codes::VRM_TYPE, "renderQueueOffsetNumber must be an integer from -9 to 9",
             p + "/renderQueueOffsetNumber");
    t.render_queue_offset = static_cast<std::int32_t>(*q);
  }
  r.fixed(j, p, "shadeColorFactor", t.shade_color);
  t.shade_multiply_texture = texture_ref(r, j, p, "shadeMultiplyTexture", textures, nullptr);
  if (auto v = r.number(j, p, "shadingShiftFactor")) t.shading_shift = *v;
  t.shading_shift_texture = texture_ref(r, j, p, "shadingShiftTexture", textures, "scale");
  if (auto v = r.number(j, p, "shadingToonyFactor")) t.shading_toony = *v;
  if (auto v = r.number(j, p, "giEqualizationFactor")) t.gi_equalization = *v;
  r.fixed(j, p, "matcapFactor", t.matcap);
  t.matcap_texture = texture_ref(r, j, p, "matcapTexture", textures, nullptr);
  r.fixed(j, p, "parametricRimColorFactor", t.rim_color);
  t.rim_multiply_texture = texture_ref(r, j, p, "rimMultiplyTexture", textures, nullptr);
  if (auto v = r.number(j, p, "rimLightingMixFactor")) t.rim_lighting_mix = *v;
  if (auto v = r.number(j, p, "parametricRimFresnelPowerFactor")) t.rim_fresnel_power = *v;
  if (auto v = r.number(j, p, "parametricRimLiftFactor")) t.rim_lift = *v;
  r.enum_member(j, p, "outlineWidthMode", kOutlineWidthModes, codes::VRM_TYPE,
                t.outline_width_mode);
  if (auto v = r.number(j, p, "outlineWidthFactor")) t.outline_width = *v;
  t.outline_width_multiply_texture =
      texture_ref(r, j, p, "outlineWidthMultiplyTexture", textures, nullptr);
  r.fixed(j, p, "outlineColorFactor", t.outline_color);
  if (auto v = r.number(j, p, "outlineLightingMixFactor")) t.outline_lighting_mix = *v;
  t.uv_animation_mask_texture = texture_ref(r, j, p, "uvAnimationMaskTexture", textures, nullptr);
  if (auto v = r.number(j, p, "uvAnimationScrollXSpeedFactor")) t.uv_animation_scroll_x = *v;
  if (auto v = r.number(j, p, "uvAnimationScrollYSpeedFactor")) t.uv_animation_scroll_y = *v;
  if (auto v = r.number(j, p, "uvAnimationRotationSpeedFactor")) t.uv_animation_rotation = *v;
  return t;
}

void read_material(Reader& r, const Json& j, const std::string& p, std::size_t textures,
                   GltfMaterial& m) {
  m.name = r.string(j, p, "name");
  if (const Json* pbr = r.object(j, p, "pbrMetallicRoughness")) {
    const std::string pp = p + "/pbrMetallicRoughness";
    r.fixed(*pbr, pp, "baseColorFactor", m.base_color_factor);
    m.base_color_texture = texture_ref(r, *pbr, pp, "baseColorTexture", textures, nullptr);
    if (auto v = r.number(*pbr, pp, "metallicFactor")) m.metallic_factor = *v;
    if (auto v = r.number(*pbr, pp, "roughnessFactor")) m.roughness_factor = *v;
    m.metallic_roughness_texture =
        texture_ref(r, *pbr, pp, "metallicRoughnessTexture", textures, nullptr);
  }
  m.normal_texture = texture_ref(r, j, p, "normalTexture", textures, "scale");
  m.occlusion_texture = texture_ref(r, j, p, "occlusionTexture", textures, "strength");
  m.emissive_texture = texture_ref(r, j, p, "emissiveTexture", textures, nullptr);
  r.fixed(j, p, "emissiveFactor", m.emissive_factor);
  r.enum_member(j, p, "alphaMode", kAlphaModes, codes::GLTF_VALUE, m.alpha_mode);
  if (auto v = r.number(j, p, "alphaCutoff")) m.alpha_cutoff = *v;
  m.double_sided = r.boolean(j, p, "doubleSided", false);
  m.extensions = r.extension_names(j, p);
  m.unlit = std::find(m.extensions.begin(), m.extensions.end(), "KHR_materials_unlit") !=
            m.extensions.end();
  if (const Json* exts = r.object(j, p, "extensions"))
    if (const Json* mt = r.object(*exts, p + "/extensions", "VRMC_materials_mtoon"))
      m.mtoon = read_mtoon(r, *mt, p + "/extensions/VRMC_materials_mtoon", textures);
  m.extras = r.extras(j);
}

void read_animation(Reader& r, const Json& j, const std::string& p, const GltfAsset& a,
                    GltfAnimation& anim) {
  anim.name = r.string(j, p, "name");
  if (const Json* samplers = r.array(j, p, "samplers")) {
    for (std::size_t i = 0; i < samplers->size() && !r.failed(); ++i) {
      const std::string sp = core::json_pointer_join(p + "/samplers", i);
      GltfAnimationSampler s;
      s.pointer = sp;
      const Json& sj = (*samplers)[i];
      if (r.is_object(sj, sp, "an animation sampler")) {
        s.input = r.index(sj, sp, "input", a.accessors.size(), "accessors", true).value_or(0);
        s.output = r.index(sj, sp, "output", a.accessors.size(), "accessors", true).value_or(0);
        r.enum_member(sj, sp, "interpolation", kInterpolations, codes::GLTF_VALUE, s.interpolation);
      }
      anim.samplers.push_back(std::move(s));
    }
  }
  const Json* channels = r.array(j, p, "channels");
  for (std::size_t i = 0; channels != nullptr && i < channels->size() && !r.failed(); ++i) {
    const std::string cp = core::json_pointer_join(p + "/channels", i);
    GltfChannel c;
    c.pointer = cp;
    const Json& cj = (*channels)[i];
    if (r.is_object(cj, cp, "an animation channel")) {
      c.sampler = r.index(cj, cp, "sampler", anim.samplers.size(), "samplers", true).value_or(0);
      const Json* target = r.object(cj, cp, "target");
      if (target == nullptr && !r.failed())
        r.fail(codes::GLTF_VALUE, "target is required", cp + "/target");
      if (target != nullptr) {
        const std::string tp = cp + "/target";
        c.node = r.index(*target, tp, "node", a.nodes.size(), "nodes");
        c.path_name = r.string(*target, tp, "path");
        if (c.path_name == "translation")
          c.path = GltfPath::kTranslation;
        else if (c.path_name == "rotation")
          c.path = GltfPath::kRotation;
        else if (c.path_name == "scale")
          c.path = GltfPath::kScale;
        else if (c.path_name == "weights")
          c.path = GltfPath::kWeights;
        else if (c.path_name.empty() && !r.failed())
          r.fail(codes::GLTF_VALUE, "path is required", tp + "/path");
      }
    }
    anim.channels.push_back(std::move(c));
  }
}

// Each node has at most one parent and the hierarchy has no cycle
// (glTF 2.0 §3.5.3: the nodes form disjoint strict trees).
void link_parents(Reader& r, GltfAsset& a) {
  for (std::size_t n = 0; n < a.nodes.size() && !r.failed(); ++n)
    for (std::size_t i = 0; i < a.nodes[n].children.size(); ++i) {
      const std::size_t c = a.nodes[n].children[i];
      const std::string cp = core::json_pointer_join(a.nodes[n].pointer + "/children", i);
      if (a.nodes[c].parent || c == n) {
        r.fail(codes::GLTF_VALUE,
               "node " + std::to_string(c) + " has two parents or is its own child", cp);
        return;
      }
      a.nodes[c].parent = n;
    }
  for (std::size_t n = 0; n < a.nodes.size() && !r.failed(); ++n) {
    std::size_t steps = 0;
    for (auto p = a.nodes[n].parent; p; p = a.nodes[*p].parent)
      if (++steps > a.nodes.size()) {
        r.fail(codes::GLTF_VALUE, "the node hierarchy has a cycle through this node",
               a.nodes[n].pointer);
        return;
      }
  }
}

std::string string_or_empty(const Json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A humanoid bone's node (required, an index below the node count).
void read_bone_node(Reader& r, const Json& b, const std::string& ptr, std::size_t nodes,
                    const std::string& bone, GltfVrm& vrm) {
  if (auto n = r.index(b, ptr, "node", nodes, "nodes", true)) vrm.human_bones.push_back({bone, *n});
}

// A morph target bind of an expression: its mesh (VRM 0.x names the mesh,
// 1.0 a node with a mesh) and a target index below the mesh's count.
void read_morph_bind(Reader& r, const Json& b, const std::string& ptr, const GltfAsset& a,
                     bool vrm0, VrmExpression& e) {
  if (!r.is_object(b, ptr, "a morph target bind")) return;
  std::optional<std::size_t> mesh;
  if (vrm0) {
    mesh = r.index(b, ptr, "mesh", a.meshes.size(), "meshes", true);
  } else if (auto node = r.index(b, ptr, "node", a.nodes.size(), "nodes", true)) {
    mesh = a.nodes[*node].mesh;
    if (!mesh)
      return r.fail(codes::VRM_TYPE, "the node of a morph target bind has no mesh", ptr + "/node");
  }
  if (!mesh) return;
  auto target = r.index(b, ptr, "index", a.meshes[*mesh].target_count(), "morph targets", true);
  if (!target) return;
  const double scale = vrm0 ? 100.0 : 1.0;  // 0.x weights are 0–100
  const double w = r.number(b, ptr, "weight").value_or(scale) / scale;
  e.binds.push_back({*mesh, *target, w});
}

VrmOverride override_of(Reader& r, const Json& e, const std::string& ptr, const char* key) {
  VrmOverride o = VrmOverride::kNone;
  r.enum_member(e, ptr, key, kOverrides, codes::VRM_TYPE, o);
  return o;
}

// VRM 1.0 expressions.preset and .custom: {name: {morphTargetBinds,
// isBinary, overrideBlink, overrideLookAt, overrideMouth}}.
void read_vrm1_expressions(Reader& r, const Json& ext, const GltfAsset& a, GltfVrm& v) {
  const Json* exprs = r.object(ext, v.pointer, "expressions");
  if (exprs == nullptr) return;
  const std::string base = v.pointer + "/expressions";
  for (const char* group : {"preset", "custom"}) {
    const Json* g = r.object(*exprs, base, group);
    if (g == nullptr) continue;
    const std::string gptr = core::json_pointer_join(base, group);
    for (auto it = g->begin(); it != g->end() && !r.failed(); ++it) {
      const std::string ptr = core::json_pointer_join(gptr, it.key());
      if (!r.is_object(it.value(), ptr, "an expression")) return;
      VrmExpression e;
      e.name = it.key();
      e.preset = std::string(group) == "preset";
      e.pointer = ptr;
      e.is_binary = r.boolean(it.value(), ptr, "isBinary", false);
      e.override_blink = override_of(r, it.value(), ptr, "overrideBlink");
      e.override_look_at = override_of(r, it.value(), ptr, "overrideLookAt");
      e.override_mouth = override_of(r, it.value(), ptr, "overrideMouth");
      if (const Json* binds = r.array(it.value(), ptr, "morphTargetBinds"))
        for (std::size_t i = 0; i < binds->size() && !r.failed(); ++i)
          read_morph_bind(r, (*binds)[i], core::json_pointer_join(ptr + "/morphTargetBinds", i), a,
                          false, e);
      v.expressions.push_back(std::move(e));
    }
  }
}

// VRM 0.x blendShapeMaster.blendShapeGroups [{name, presetName, binds:
// [{mesh, index, weight 0–100}], isBinary}], preset names in VRM 1.0 form.
void read_vrm0_expressions(Reader& r, const Json& ext, const GltfAsset& a, GltfVrm& v) {
  const Json* master = r.object(ext, v.pointer, "blendShapeMaster");
  if (master == nullptr) return;
  const std::string mptr = v.pointer + "/blendShapeMaster";
  const Json* groups = r.array(*master, mptr, "blendShapeGroups");
  if (groups == nullptr) return;
  static const std::map<std::string, std::string> kPresets = {{"neutral", "neutral"},
                                                              {"a", "aa"},
                                                              {"i", "ih"},
                                                              {"u", "ou"},
                                                              {"e", "ee"},
                                                              {"o", "oh"},
                                                              {"blink", "blink"},
                                                              {"joy", "happy"},
                                                              {"angry", "angry"},
                                                              {"sorrow", "sad"},
                                                              {"fun", "relaxed"},
                                                              {"lookup", "lookUp"},
                                                              {"lookdown", "lookDown"},
                                                              {"lookleft", "lookLeft"},
                                                              {"lookright", "lookRight"},
                                                              {"blink_l", "blinkLeft"},
                                                              {"blink_r", "blinkRight"}};
  for (std::size_t i = 0; i < groups->size() && !r.failed(); ++i) {
    const Json& g = (*groups)[i];
    const std::string ptr = core::json_pointer_join(mptr + "/blendShapeGroups", i);
    if (!r.is_object(g, ptr, "a blend shape group")) return;
    VrmExpression e;
    e.pointer = ptr;
    const auto preset = kPresets.find(r.string(g, ptr, "presetName"));
    e.preset = preset != kPresets.end();
    e.name = e.preset ? preset->second : r.string(g, ptr, "name");
    e.is_binary = r.boolean(g, ptr, "isBinary", false);
    if (const Json* binds = r.array(g, ptr, "binds"))
      for (std::size_t k = 0; k < binds->size() && !r.failed(); ++k)
        read_morph_bind(r, (*binds)[k], core::json_pointer_join(ptr + "/binds", k), a, true, e);
    v.expressions.push_back(std::move(e));
  }
}

// A VRM 0.x materialProperties entry's MToon properties, as written: numbers,
// four-number vectors, texture indices below the texture count, booleans.
void read_mtoon0_properties(const Json& m, std::size_t textures, VrmMaterialProperties& props) {
  const auto members = [&](const char* key) -> const Json* {
    auto it = m.find(key);
    return it != m.end() && it->is_object() ? &*it : nullptr;
  };
  if (const Json* f = members("floatProperties"))
    for (auto it = f->begin(); it != f->end(); ++it)
      if (auto v = core::json_finite_number(it.value())) props.float_properties[it.key()] = *v;
  if (const Json* v = members("vectorProperties"))
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it.value().is_array() || it.value().size() != 4) continue;
      std::array<double, 4> a{};
      bool ok = true;
      for (std::size_t i = 0; i < 4 && ok; ++i) {
        auto x = core::json_finite_number(it.value()[i]);
        ok = x.has_value();
        a[i] = x.value_or(0.0);
      }
      if (ok) props.vector_properties[it.key()] = a;
    }
  if (const Json* t = members("textureProperties"))
    for (auto it = t->begin(); it != t->end(); ++it)
      if (auto i = core::json_uint32(it.value()); i && *i < textures)
        props.texture_properties[it.key()] = *i;
  if (const Json* k = members("keywordMap"))
    for (auto it = k->begin(); it != k->end(); ++it)
      if (it.value().is_boolean()) props.keywords[it.key()] = it.value().get<bool>();
}

// VRM 0.x (vrm-specification 0.0): meta, humanoid.humanBones [{bone, node}],
// materialProperties.
void read_vrm0(Reader& r, const Json& ext, std::size_t nodes, std::size_t textures, GltfVrm& v) {
  const std::string base = "/extensions/VRM";
  v.version = "0.x";
  v.pointer = base;
  v.spec_version = string_or_empty(ext, "specVersion");
  v.exporter_version = string_or_empty(ext, "exporterVersion");
  if (auto meta = ext.find("meta"); meta != ext.end()) {
    v.title = string_or_empty(*meta, "title");
    v.author = string_or_empty(*meta, "author");
    v.model_version = string_or_empty(*meta, "version");
  }
  if (auto hum = ext.find("humanoid"); hum != ext.end()) {
    if (!hum->is_object())
      return r.fail(codes::VRM_TYPE, "humanoid must be an object", base + "/humanoid");
    if (auto bones = hum->find("humanBones"); bones != hum->end()) {
      const std::string bptr = base + "/humanoid/humanBones";
      if (!bones->is_array())
        return r.fail(codes::VRM_TYPE, "VRM 0.x humanBones must be an array", bptr);
      for (std::size_t i = 0; i < bones->size() && !r.failed(); ++i) {
        const Json& b = (*bones)[i];
        const std::string ptr = core::json_pointer_join(bptr, i);
        if (!b.is_object())
          return r.fail(codes::VRM_TYPE, "a humanBones entry must be an object", ptr);
        const std::string name = string_or_empty(b, "bone");
        if (name.empty())
          return r.fail(codes::VRM_TYPE, "bone must be a non-empty string", ptr + "/bone");
        read_bone_node(r, b, ptr, nodes, name, v);
      }
    }
  }
  // Draw hints; an entry that is not an object says nothing and is skipped.
  if (auto mp = ext.find("materialProperties"); mp != ext.end() && mp->is_array())
    for (const Json& m : *mp) {
      if (!m.is_object()) continue;
      VrmMaterialProperties props;
      props.name = string_or_empty(m, "name");
      props.shader = string_or_empty(m, "shader");
      if (auto tags = m.find("tagMap"); tags != m.end())
        props.render_type = string_or_empty(*tags, "RenderType");
      if (auto q = m.find("renderQueue"); q != m.end())
        props.render_queue = core::json_finite_number(*q);
      read_mtoon0_properties(m, textures, props);
      v.materials.push_back(std::move(props));
    }
}

// VRM 1.0 (VRMC_vrm-1.0): meta, humanoid.humanBones {bone: {node}}.
void read_vrm1(Reader& r, const Json& ext, std::size_t nodes, GltfVrm& v) {
  const std::string base = "/extensions/VRMC_vrm";
  v.version = "1.0";
  v.pointer = base;
  v.spec_version = string_or_empty(ext, "specVersion");
  if (auto meta = ext.find("meta"); meta != ext.end() && meta->is_object()) {
    v.title = string_or_empty(*meta, "name");
    v.model_version = string_or_empty(*meta, "version");
    if (auto authors = meta->find("authors"); authors != meta->end() && authors->is_array())
      for (const auto& a : *authors) {
        if (!a.is_string()) continue;
        if (!v.author.empty()) v.author += ", ";
        v.author += a.get<std::string>();
      }
  }
  if (auto hum = ext.find("humanoid"); hum != ext.end()) {
    if (!hum->is_object())
      return r.fail(codes::VRM_TYPE, "humanoid must be an object", base + "/humanoid");
    if (auto bones = hum->find("humanBones"); bones != hum->end()) {
      const std::string bptr = base + "/humanoid/humanBones";
      if (!bones->is_object())
        return r.fail(codes::VRM_TYPE, "VRM 1.0 humanBones must be an object", bptr);
      for (auto it = bones->begin(); it != bones->end() && !r.failed(); ++it) {
        const std::string ptr = core::json_pointer_join(bptr, it.key());
        if (!it.value().is_object())
          return r.fail(codes::VRM_TYPE, "a human bone must be an object", ptr);
        read_bone_node(r, it.value(), ptr, nodes, it.key(), v);
      }
    }
  }
}

std::optional<GltfVrm> read_vrm(Reader& r, const Json& root, const GltfAsset& a) {
  const Json* exts = r.object(root, "", "extensions");
  if (exts == nullptr) return std::nullopt;
  auto v1 = exts->find("VRMC_vrm");
  auto v0 = exts->find("VRM");
  GltfVrm v;
  if (v1 != exts->end()) {
    if (!v1->is_object()) {
      r.fail(codes::VRM_TYPE, "VRMC_vrm must be an object", "/extensions/VRMC_vrm");
      return std::nullopt;
    }
    read_vrm1(r, *v1, a.nodes.size(), v);
    if (!r.failed()) read_vrm1_expressions(r, *v1, a, v);
    v.both = v0 != exts->end();
  } else if (v0 != exts->end()) {
    if (!v0->is_object()) {
      r.fail(codes::VRM_TYPE, "VRM must be an object", "/extensions/VRM");
      return std::nullopt;
    }
    read_vrm0(r, *v0, a.nodes.size(), a.textures.size(), v);
    if (!r.failed()) read_vrm0_expressions(r, *v0, a, v);
  } else {
    return std::nullopt;
  }
  return v;
}

}  // namespace

core::Result<Json> parse_gltf_json(std::string_view text, std::uint64_t text_offset,
                                   const core::JsonLimits& limits) {
  auto json = core::parse_json_strict(text, limits);
  if (!json) {
    core::Error e = std::move(json).error();
    if (e.location.offset) e.location.offset = *e.location.offset + text_offset;
    return e;
  }
  if (!json->is_object())
    return core::error_at_pointer(
        codes::GLTF_NOT_OBJECT,
        std::string("the glTF JSON must be an object, not ") + core::json_type_name(*json), "");
  return json;
}

core::Result<GltfAsset> read_gltf_asset(const Json& root) {
  Reader r(root);
  GltfAsset a;
  if (const Json* asset = r.object(root, "", "asset")) {
    a.version = r.string(*asset, "/asset", "version");
    a.generator = r.string(*asset, "/asset", "generator");
  }
  a.extensions_used = r.strings(root, "", "extensionsUsed");
  a.extensions_required = r.strings(root, "", "extensionsRequired");
  a.samplers = r.count("samplers");
  a.cameras = r.count("cameras");
  a.buffers = r.each<GltfBuffer>("buffers", [&](const Json& j, const std::string& p, auto& b) {
    auto len = j.find("byteLength");
    if (len == j.end() || !core::json_uint32(*len)) {
      r.fail(codes::GLTF_BUFFER,
             len == j.end() ? "byteLength is missing" : "byteLength must be an unsigned integer",
             p + "/byteLength");
      return;
    }
    b.byte_length = len->get<std::uint64_t>();
    if (auto uri = j.find("uri"); uri != j.end()) {
      if (!uri->is_string()) return r.fail(codes::GLTF_BUFFER, "uri must be a string", p + "/uri");
      b.uri = uri->get<std::string>();
    }
  });
  a.buffer_views =
      r.each<GltfBufferView>("bufferViews", [&](const Json& j, const std::string& p, auto& v) {
        read_buffer_view(r, j, p, a.buffers.size(), v);
      });
  a.accessors =
      r.each<GltfAccessor>("accessors", [&](const Json& j, const std::string& p, auto& x) {
        read_accessor(r, j, p, a.buffer_views.size(), x);
      });
  a.images = r.each<GltfImage>("images", [&](const Json& j, const std::string& p, auto& im) {
    im.name = r.string(j, p, "name");
    im.uri = r.optional_string(j, p, "uri");
    im.buffer_view = r.index(j, p, "bufferView", a.buffer_views.size(), "bufferViews");
    im.mime_type = r.string(j, p, "mimeType");
    im.extras = r.extras(j);
  });
  const std::size_t images = a.images.size();
  const std::size_t samplers = a.samplers;
  a.textures = r.each<GltfTexture>("textures", [&](const Json& j, const std::string& p, auto& t) {
    t.name = r.string(j, p, "name");
    t.source = r.index(j, p, "source", images, "images");
    t.sampler = r.index(j, p, "sampler", samplers, "samplers");
  });
  a.materials =
      r.each<GltfMaterial>("materials", [&](const Json& j, const std::string& p, auto& m) {
        read_material(r, j, p, a.textures.size(), m);
      });
  const std::size_t materials = a.materials.size();
  a.meshes = r.each<GltfMesh>("meshes", [&](const Json& j, const std::string& p, auto& m) {
    read_mesh(r, j, p, a, materials, m);
  });
  // Nodes refer to skins and skins to nodes: both counts first.
  const std::size_t nodes = r.count("nodes");
  const std::size_t skins = r.count("skins");
  a.nodes = r.each<GltfNode>("nodes", [&](const Json& j, const std::string& p, auto& n) {
    read_node(r, j, p, nodes, a.meshes.size(), skins, a.cameras, n);
  });
  a.skins = r.each<GltfSkin>("skins", [&](const Json& j, const std::string& p, auto& s) {
    s.name = r.string(j, p, "name");
    const Json* joints = r.array(j, p, "joints");
    if (joints == nullptr || joints->empty()) {
      if (!r.failed()) r.fail(codes::GLTF_VALUE, "a skin needs at least one joint", p + "/joints");
      return;
    }
    for (std::size_t i = 0; i < joints->size() && !r.failed(); ++i)
      if (auto n = r.index_value((*joints)[i], core::json_pointer_join(p + "/joints", i), nodes,
                                 "nodes"))
        s.joints.push_back(*n);
    s.inverse_bind_matrices = r.index(j, p, "inverseBindMatrices", a.accessors.size(), "accessors");
    s.skeleton = r.index(j, p, "skeleton", nodes, "nodes");
  });
  a.animations = r.each<GltfAnimation>(
      "animations",
      [&](const Json& j, const std::string& p, auto& anim) { read_animation(r, j, p, a, anim); });
  a.scenes = r.each<GltfScene>("scenes", [&](const Json& j, const std::string& p, auto& s) {
    s.name = r.string(j, p, "name");
    if (const Json* list = r.array(j, p, "nodes"))
      for (std::size_t i = 0; i < list->size() && !r.failed(); ++i)
        if (auto n =
                r.index_value((*list)[i], core::json_pointer_join(p + "/nodes", i), nodes, "nodes"))
          s.nodes.push_back(*n);
  });
  a.scene = r.index(root, "", "scene", a.scenes.size(), "scenes");
  link_parents(r, a);
  if (!r.failed()) a.vrm = read_vrm(r, root, a);
  if (r.failed()) return r.take_error();
  return a;
}

}  // namespace charkit::scene
