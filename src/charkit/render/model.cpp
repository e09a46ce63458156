// Loading a model for the passes (docs/render/render.md, "Models and
// parts").
#include "charkit/render/model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <functional>
#include <set>
#include <string_view>

#include "charkit/core/json.h"
#include "charkit/render/error_codes.h"

namespace charkit::render {

namespace {

using core::Json;

core::Error model_error(std::string message, std::string pointer) {
  return core::error_at_pointer(codes::RENDER_MODEL, std::move(message), std::move(pointer));
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

/// The documented name fallback: eye parts (not brows, lashes, lids or
/// lines), then face parts.
std::optional<PartKind> kind_from_name(const std::string& name) {
  const std::string n = lower(name);
  if (n.empty()) return std::nullopt;
  const bool eye_word = contains(n, "eye") || contains(n, "iris") || contains(n, "pupil");
  const bool eye_surround =
      contains(n, "brow") || contains(n, "lash") || contains(n, "lid") || contains(n, "line");
  if (eye_word && !eye_surround) return PartKind::kEye;
  if (contains(n, "face") || contains(n, "head") || contains(n, "mouth") || contains(n, "cheek"))
    return PartKind::kFace;
  return std::nullopt;
}

// The part a VRM humanoid bone makes of what hangs on it or is skinned to
// it: the eye bones → eye; head and jaw → face.
std::optional<PartKind> kind_from_bone(const std::string& bone) {
  if (bone == "leftEye" || bone == "rightEye") return PartKind::kEye;
  if (bone == "head" || bone == "jaw") return PartKind::kFace;
  return std::nullopt;
}

// The humanoid bone that decides a primitive's part: for a skinned one, the
// joint that carries the most of its vertices' weight, when that joint is a
// humanoid bone; else the bone of the mesh node itself or of its parent.
// "" when none.
std::string part_bone(const std::map<std::size_t, std::string>& bone_of,
                      const scene::GltfAsset& asset, std::size_t node,
                      const std::vector<std::uint32_t>& joints, const std::vector<float>& weights) {
  if (bone_of.empty()) return {};
  if (!joints.empty()) {
    const scene::GltfSkin& skin = asset.skins[*asset.nodes[node].skin];
    std::vector<double> total(skin.joints.size(), 0.0);
    for (std::size_t i = 0; i < joints.size(); ++i)
      if (weights[i] > 0.0F) total[joints[i]] += weights[i];
    const auto top =
        static_cast<std::size_t>(std::max_element(total.begin(), total.end()) - total.begin());
    const auto it = bone_of.find(skin.joints[top]);
    return it != bone_of.end() && total[top] > 0 ? it->second : std::string();
  }
  for (std::optional<std::size_t> n = node; n; n = asset.nodes[*n].parent) {
    if (const auto it = bone_of.find(*n); it != bone_of.end()) return it->second;
    if (*n != node) break;  // the node and its parent only
  }
  return {};
}

// Morph target weights by mesh from the VRM expressions (VRM 1.0
// expressions; 0.x blend shape groups read the same way): every target an
// expression binds starts at 0; each expression adds weight × bind weight,
// its weight 0/1 when binary, blink / look-at / mouth expressions scaled by
// the overrides of the others (block: 0 while the other is active; blend:
// 1 − its weight).
core::Result<std::map<std::size_t, std::vector<std::optional<double>>>> expression_weights(
    const scene::GltfAsset& asset, const std::map<std::string, double>& wanted) {
  std::map<std::size_t, std::vector<std::optional<double>>> out;
  const std::vector<scene::VrmExpression> none;
  const auto& exprs = asset.vrm ? asset.vrm->expressions : none;
  std::map<std::string, double> weight;
  for (const auto& entry : wanted) {
    const std::string& name = entry.first;  // named, not bound: a lambda captures it
    const double w = entry.second;
    const auto it = std::find_if(exprs.begin(), exprs.end(),
                                 [&](const scene::VrmExpression& e) { return e.name == name; });
    if (it == exprs.end()) {
      std::string have;
      for (const scene::VrmExpression& e : exprs) have += (have.empty() ? "" : ", ") + e.name;
      return core::make_error(codes::RENDER_EXPRESSION,
                              "the model has no expression \"" + name +
                                  "\" (it has: " + (have.empty() ? "none" : have) + ")");
    }
    if (!(w >= 0.0 && w <= 1.0))
      return core::make_error(codes::RENDER_EXPRESSION,
                              "the weight of \"" + name + "\" must be from 0 to 1");
    weight[name] = it->is_binary ? (w > 0.5 ? 1.0 : 0.0) : w;
  }
  const auto in = [](const std::string& n, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* s) { return n == s; });
  };
  // The override multipliers of the three groups.
  double blink = 1, look_at = 1, mouth = 1;
  const auto apply = [](double& m, scene::VrmOverride o, double w) {
    if (o == scene::VrmOverride::kBlock && w > 0) m = 0;
    if (o == scene::VrmOverride::kBlend) m *= 1 - w;
  };
  for (const scene::VrmExpression& e : exprs) {
    const double w = weight.count(e.name) ? weight[e.name] : 0.0;
    apply(blink, e.override_blink, w);
    apply(look_at, e.override_look_at, w);
    apply(mouth, e.override_mouth, w);
  }
  for (const scene::VrmExpression& e : exprs) {
    double w = weight.count(e.name) ? weight[e.name] : 0.0;
    if (in(e.name, {"blink", "blinkLeft", "blinkRight"})) w *= blink;
    if (in(e.name, {"lookUp", "lookDown", "lookLeft", "lookRight"})) w *= look_at;
    if (in(e.name, {"aa", "ih", "ou", "ee", "oh"})) w *= mouth;
    for (const scene::VrmMorphBind& b : e.binds) {
      auto& targets = out[b.mesh];
      targets.resize(asset.meshes[b.mesh].target_count());
      targets[b.target] = targets[b.target].value_or(0.0) + w * b.weight;
    }
  }
  return out;
}

core::Mat4f node_local(const scene::GltfNode& node) {
  core::Mat4f r{};
  if (node.matrix) {
    for (std::size_t i = 0; i < 16; ++i) r[i] = static_cast<float>((*node.matrix)[i]);
    return r;
  }
  core::Trs<float> trs;
  for (std::size_t i = 0; i < 3; ++i) {
    trs.translation[i] = static_cast<float>(node.translation[i]);
    trs.scale[i] = static_cast<float>(node.scale[i]);
  }
  trs.rotation = {static_cast<float>(node.rotation[0]), static_cast<float>(node.rotation[1]),
                  static_cast<float>(node.rotation[2]), static_cast<float>(node.rotation[3])};
  return core::compose(trs);
}

}  // namespace

core::Status set_previous_positions(RenderModel& now, const RenderModel& before) {
  if (now.primitives.size() != before.primitives.size())
    return model_error("the two poses have different primitives", "/meshes");
  for (std::size_t p = 0; p < now.primitives.size(); ++p) {
    RenderPrimitive& a = now.primitives[p];
    const RenderPrimitive& b = before.primitives[p];
    if (a.vertices.size() != b.vertices.size())
      return model_error("the two poses differ in vertex count", a.pointer);
    for (std::size_t v = 0; v < a.vertices.size(); ++v)
      std::copy(b.vertices[v].position, b.vertices[v].position + 3, a.vertices[v].previous);
  }
  return core::Ok{};
}

const char* part_kind_name(PartKind kind) {
  switch (kind) {
    case PartKind::kBody:
      return "body";
    case PartKind::kFace:
      return "face";
    case PartKind::kEye:
      return "eye";
    case PartKind::kTransparent:
      return "transparent";
  }
  return "body";
}

core::Result<PartsMapping> parse_parts(core::Bytes bytes) {
  auto json = core::parse_json_strict(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!json) return std::move(json).error();
  auto bad = [](std::string message, std::string pointer) {
    return core::error_at_pointer(codes::RENDER_PARTS, std::move(message), std::move(pointer));
  };
  if (!json->is_object()) return bad("the parts mapping must be a JSON object", "");
  PartsMapping m;
  for (const auto& [key, value] : json->items()) {
    PartKind kind;
    if (key == "face")
      kind = PartKind::kFace;
    else if (key == "eye")
      kind = PartKind::kEye;
    else if (key == "transparent")
      kind = PartKind::kTransparent;
    else if (key == "body")
      kind = PartKind::kBody;
    else
      return bad("\"" + key + "\" is not a part (face, eye, transparent, body)", "/" + key);
    if (!value.is_array()) return bad("a part maps to a list of names", "/" + key);
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string())
        return bad("a material or mesh name is a string", "/" + key + "/" + std::to_string(i));
      m.by_name[value[i].template get<std::string>()] = kind;
    }
  }
  return m;
}

namespace {

// load_render_model's steps over one document: the nodes' world matrices,
// each drawn node's skin and morph weights, each primitive's vertices,
// material and part.
class Loader {
 public:
  Loader(scene::GltfDocument& doc, const ModelLoadOptions& options)
      : doc_(doc), asset_(doc.asset()), options_(options) {}

  core::Result<RenderModel> run();

 private:
  void place_nodes();
  core::Result<std::optional<std::uint32_t>> texture_image(std::size_t texture);
  core::Result<std::vector<core::Mat4f>> joint_matrices(std::size_t node);
  std::vector<double> morph_weights(std::size_t node) const;
  // The primitive's vertices and indices (out), and its JOINTS_0 / WEIGHTS_0
  // when skinned (joints, weights).
  core::Status geometry(const scene::GltfPrimitive& prim, std::size_t n,
                        const std::vector<core::Mat4f>& joint_matrix,
                        const std::vector<double>& morph, RenderPrimitive& out,
                        std::vector<std::uint32_t>& joints, std::vector<float>& weights);
  // Colour, texture and alpha; returns whether the material blends.
  core::Result<bool> material(const scene::GltfPrimitive& prim, RenderPrimitive& out);
  // The material's MToon lighting: VRMC_materials_mtoon, else the VRM 0.x
  // MToon properties of the material of that name; unset for other shaders.
  core::Result<std::optional<MToonShading>> mtoon(const scene::GltfMaterial& mat);
  core::Status choose_part(const scene::GltfPrimitive& prim, RenderPrimitive& out, bool blend,
                           std::size_t n, const std::vector<std::uint32_t>& joints,
                           const std::vector<float>& weights);
  // The VRM expression that decides a primitive's part: one of the blink
  // expressions when it moves the primitive (face), else a look-at one
  // (eye); "" when none moves it.
  core::Result<std::string> part_expression(const scene::GltfPrimitive& prim, std::size_t mesh);

  scene::GltfDocument& doc_;
  const scene::GltfAsset& asset_;
  const ModelLoadOptions& options_;
  RenderModel model_;
  std::map<std::string, const scene::VrmMaterialProperties*> vrm_materials_;  // VRM 0.x, by name
  std::map<std::size_t, std::string> bone_of_;                       // VRM humanoid bones by node
  std::map<std::size_t, std::vector<std::optional<double>>> bound_;  // expression weights
  std::vector<core::Mat4f> world_;
  std::vector<std::size_t> drawn_;  // nodes with a mesh, in visiting order
  std::map<std::size_t, std::optional<std::uint32_t>> image_slot_;  // glTF image → model image
  std::uint64_t total_vertices_ = 0;
};

void Loader::place_nodes() {
  const std::vector<scene::GltfNode>& nodes = asset_.nodes;
  const std::size_t node_count = nodes.size();
  // World matrices from the scene's roots (or every node nobody parents).
  world_.assign(node_count, core::identity4<float>());
  std::vector<bool> placed(node_count, false);
  std::vector<std::size_t> roots;
  if (const std::size_t s = asset_.scene.value_or(0); s < asset_.scenes.size())
    roots = asset_.scenes[s].nodes;
  if (roots.empty())
    for (std::size_t i = 0; i < node_count; ++i)
      if (!nodes[i].parent) roots.push_back(i);
  std::function<void(std::size_t, const core::Mat4f&, int)> visit =
      [&](std::size_t n, const core::Mat4f& parent, int depth) {
        if (placed[n] || depth > 256) return;  // a node twice: once only
        placed[n] = true;
        const auto pose = options_.node_locals.find(n);
        world_[n] = core::mul(
            parent, pose != options_.node_locals.end() ? pose->second : node_local(nodes[n]));
        if (nodes[n].mesh) drawn_.push_back(n);
        for (std::size_t k : nodes[n].children) visit(k, world_[n], depth + 1);
      };
  for (std::size_t r : roots) visit(r, core::identity4<float>(), 0);
}

core::Result<std::optional<std::uint32_t>> Loader::texture_image(std::size_t texture) {
  const auto source = asset_.textures[texture].source;
  if (!source) return std::optional<std::uint32_t>{};
  if (auto it = image_slot_.find(*source); it != image_slot_.end()) return it->second;
  const std::string& ptr = asset_.images[*source].pointer;
  const auto view = asset_.images[*source].buffer_view;
  if (!view) {
    model_.warnings.push_back(ptr + ": only images in buffer views are decoded; drawn untextured");
    image_slot_[*source] = std::nullopt;
    return std::optional<std::uint32_t>{};
  }
  auto bytes = doc_.buffer_view(*view);
  if (!bytes) return std::move(bytes).error();
  auto img = scene::decode_image(*bytes, options_.max_texture_side);
  if (!img) {
    core::Error e = std::move(img).error();
    e.location = core::Location::at_pointer(ptr);
    return e;
  }
  model_.images.push_back(std::move(*img));
  const auto slot = static_cast<std::uint32_t>(model_.images.size() - 1);
  image_slot_[*source] = slot;
  return std::optional<std::uint32_t>{slot};
}

core::Result<std::vector<core::Mat4f>> Loader::joint_matrices(std::size_t n) {
  // Skinning at the rest pose: joint world × inverse bind.
  std::vector<core::Mat4f> joint_matrix;
  if (const auto skin_index = asset_.nodes[n].skin) {
    const scene::GltfSkin& skin = asset_.skins[*skin_index];
    std::vector<float> inverse_bind;
    if (const auto ib = skin.inverse_bind_matrices) {
      auto m = doc_.read_accessor_floats(*ib);
      if (!m) return std::move(m).error();
      if (m->size() != skin.joints.size() * 16)
        return model_error("inverseBindMatrices does not hold one MAT4 per joint", skin.pointer);
      inverse_bind = std::move(*m);
    }
    for (std::size_t j = 0; j < skin.joints.size(); ++j) {
      core::Mat4f ibm = core::identity4<float>();
      if (!inverse_bind.empty()) std::copy_n(inverse_bind.begin() + 16 * j, 16, ibm.begin());
      joint_matrix.push_back(core::mul(world_[skin.joints[j]], ibm));
    }
  }
  return joint_matrix;
}

// Morph weights: the node's, else the mesh's; expression-bound targets from
// the expressions.
std::vector<double> Loader::morph_weights(std::size_t n) const {
  const scene::GltfNode& node = asset_.nodes[n];
  const scene::GltfMesh& mesh = asset_.meshes[*node.mesh];
  std::vector<double> morph = !node.weights.empty() ? node.weights : mesh.weights;
  morph.resize(mesh.target_count(), 0.0);
  if (const auto b = bound_.find(*node.mesh); b != bound_.end())
    for (std::size_t t = 0; t < b->second.size() && t < morph.size(); ++t)
      if (b->second[t]) morph[t] = *b->second[t];
  return morph;
}

core::Status Loader::geometry(const scene::GltfPrimitive& prim, std::size_t n,
                              const std::vector<core::Mat4f>& joint_matrix,
                              const std::vector<double>& morph, RenderPrimitive& out,
                              std::vector<std::uint32_t>& joints, std::vector<float>& weights) {
  const std::string& ptr = prim.pointer;
  const scene::GltfAttributes& attributes = prim.attributes;
  const auto position = attributes.find("POSITION");
  if (!position) return model_error("a primitive needs POSITION", ptr + "/attributes");
  auto pos = doc_.read_accessor_floats(*position);
  if (!pos) return std::move(pos).error();
  const std::size_t count = pos->size() / 3;
  if (pos->size() != count * 3) return model_error("POSITION is not VEC3", ptr);
  total_vertices_ += count;
  if (total_vertices_ > options_.max_vertices)
    return model_error(
        "the model has more than " + std::to_string(options_.max_vertices) + " vertices", ptr);
  auto read = [&](const char* name, std::size_t comps) -> core::Result<std::vector<float>> {
    const auto a = attributes.find(name);
    if (!a) return std::vector<float>{};
    auto v = doc_.read_accessor_floats(*a);
    if (!v) return std::move(v).error();
    if (v->size() != count * comps)
      return model_error(std::string(name) + " does not match POSITION's count",
                         ptr + "/attributes/" + name);
    return v;
  };
  auto normal = read("NORMAL", 3);
  if (!normal) return std::move(normal).error();
  // Morph targets: position (and normal) deltas at their weights.
  for (std::size_t t = 0; t < morph.size() && t < prim.targets.size(); ++t) {
    if (morph[t] == 0.0) continue;
    const auto w = static_cast<float>(morph[t]);
    for (auto [name, values] : {std::pair{"POSITION", &*pos}, std::pair{"NORMAL", &*normal}}) {
      const auto a = prim.targets[t].find(name);
      if (!a || values->empty()) continue;
      auto delta = doc_.read_accessor_floats(*a);
      if (!delta) return std::move(delta).error();
      if (delta->size() != values->size())
        return model_error(
            std::string("a morph target's ") + name + " does not match the primitive's",
            core::json_pointer_join(ptr + "/targets", t));
      for (std::size_t i = 0; i < values->size(); ++i) (*values)[i] += w * (*delta)[i];
    }
  }
  auto uv = read("TEXCOORD_0", 2);
  if (!uv) return std::move(uv).error();
  if (!joint_matrix.empty() && attributes.find("JOINTS_0") && attributes.find("WEIGHTS_0")) {
    auto w = read("WEIGHTS_0", 4);
    if (!w) return std::move(w).error();
    auto j = doc_.read_accessor_uints(*attributes.find("JOINTS_0"));
    if (!j) return std::move(j).error();
    if (j->size() != count * 4) return model_error("JOINTS_0 does not match POSITION", ptr);
    for (std::uint32_t k : *j)
      if (k >= joint_matrix.size())
        return model_error("JOINTS_0 names a joint the skin lacks", ptr + "/attributes/JOINTS_0");
    weights = std::move(*w);
    joints = std::move(*j);
  }
  out.vertices.resize(count);
  const core::Mat4f& node_world = world_[n];
  for (std::size_t v = 0; v < count; ++v) {
    core::Mat4f m = node_world;
    if (!weights.empty()) {
      float sum = 0;
      core::Mat4f blend{};
      for (std::size_t k = 0; k < 4; ++k) {
        const float w = weights[4 * v + k];
        if (!(w > 0.0F)) continue;
        sum += w;
        const core::Mat4f& jm = joint_matrix[joints[4 * v + k]];
        for (std::size_t e = 0; e < 16; ++e) blend[e] += w * jm[e];
      }
      if (sum > 0.0F) {
        for (float& e : blend) e /= sum;
        m = blend;
      }
    }
    const core::Vec3f local{(*pos)[3 * v], (*pos)[3 * v + 1], (*pos)[3 * v + 2]};
    const core::Vec3f wp = core::transform_point(m, local);
    RenderVertex& rv = out.vertices[v];
    std::copy(wp.begin(), wp.end(), rv.position);
    std::copy(wp.begin(), wp.end(), rv.previous);
    if (!normal->empty()) {
      const core::Mat3f nm = core::transpose(core::inverse(core::linear_part(m)));
      const core::Vec3f wn = core::normalize(
          core::mul(nm, core::Vec3f{(*normal)[3 * v], (*normal)[3 * v + 1], (*normal)[3 * v + 2]}));
      std::copy(wn.begin(), wn.end(), rv.normal);
    } else {
      rv.normal[0] = rv.normal[1] = rv.normal[2] = 0.0F;
    }
    rv.uv[0] = uv->empty() ? 0.0F : (*uv)[2 * v];
    rv.uv[1] = uv->empty() ? 0.0F : (*uv)[2 * v + 1];
  }
  if (const auto ind = prim.indices) {
    auto idx = doc_.read_accessor_uints(*ind);
    if (!idx) return std::move(idx).error();
    out.indices = std::move(*idx);
  } else {
    out.indices.resize(count);
    for (std::size_t i = 0; i < count; ++i) out.indices[i] = static_cast<std::uint32_t>(i);
  }
  out.indices.resize(out.indices.size() / 3 * 3);
  for (std::uint32_t i : out.indices)
    if (i >= count) return model_error("an index is past the vertex count", ptr + "/indices");
  if (normal->empty()) {  // smooth normals from the faces
    std::vector<core::Vec3f> acc(count, core::Vec3f{0, 0, 0});
    for (std::size_t t = 0; t + 2 < out.indices.size(); t += 3) {
      const float* a = out.vertices[out.indices[t]].position;
      const float* b = out.vertices[out.indices[t + 1]].position;
      const float* c = out.vertices[out.indices[t + 2]].position;
      const core::Vec3f fn = core::cross(core::Vec3f{b[0] - a[0], b[1] - a[1], b[2] - a[2]},
                                         core::Vec3f{c[0] - a[0], c[1] - a[1], c[2] - a[2]});
      for (int k = 0; k < 3; ++k)
        acc[out.indices[t + static_cast<std::size_t>(k)]] =
            core::add(acc[out.indices[t + static_cast<std::size_t>(k)]], fn);
    }
    for (std::size_t v = 0; v < count; ++v) {
      const core::Vec3f nn = core::normalize(acc[v]);
      std::copy(nn.begin(), nn.end(), out.vertices[v].normal);
    }
  }
  return core::Ok{};
}

core::Result<bool> Loader::material(const scene::GltfPrimitive& prim, RenderPrimitive& out) {
  bool blend = false;
  out.double_sided = false;  // glTF's default material is single-sided
  if (const auto mi = prim.material) {
    const scene::GltfMaterial& mat = asset_.materials[*mi];
    out.material_name = mat.name;
    blend = mat.alpha_mode == scene::GltfAlphaMode::kBlend;
    out.alpha_mask = mat.alpha_mode == scene::GltfAlphaMode::kMask;
    out.alpha_cutoff = static_cast<float>(mat.alpha_cutoff);
    for (std::size_t c = 0; c < 4; ++c)
      out.base_colour[c] = static_cast<float>(mat.base_color_factor[c]);
    if (mat.base_color_texture) {
      auto slot = texture_image(mat.base_color_texture->texture);
      if (!slot) return std::move(slot).error();
      out.base_texture = *slot;
    }
    out.metallic = static_cast<float>(std::clamp(mat.metallic_factor, 0.0, 1.0));
    out.roughness = static_cast<float>(std::clamp(mat.roughness_factor, 0.0, 1.0));
    auto shading = mtoon(mat);
    if (!shading) return std::move(shading).error();
    out.mtoon = std::move(*shading);
    // Back faces: glTF's doubleSided; a VRM 0.x MToon material's _CullMode
    // (0 off, 1 front, 2 back, the default) as three-vrm and UniVRM read it.
    out.double_sided = mat.double_sided;
    if (const auto found = vrm_materials_.find(mat.name);
        found != vrm_materials_.end() && found->second->shader == "VRM/MToon") {
      const auto cull = found->second->float_properties.find("_CullMode");
      out.double_sided =
          (cull != found->second->float_properties.end() ? cull->second : 2.0) == 0.0;
    }
    if (!out.mtoon) {
      const auto found = vrm_materials_.find(mat.name);
      out.unlit = mat.unlit || (found != vrm_materials_.end() &&
                                found->second->shader.rfind("VRM/Unlit", 0) == 0);
      if (mat.metallic_roughness_texture && !out.unlit) {
        auto slot = texture_image(mat.metallic_roughness_texture->texture);
        if (!slot) return std::move(slot).error();
        out.metallic_roughness_texture = *slot;
      }
    }
  }
  return blend;
}

namespace {
float srgb_channel_to_linear(double c) {
  return static_cast<float>(c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4));
}
}  // namespace

core::Result<std::optional<MToonShading>> Loader::mtoon(const scene::GltfMaterial& mat) {
  MToonShading s;
  std::optional<std::size_t> shade_texture, rim_texture, matcap_texture, shift_texture,
      outline_texture, uv_mask_texture;
  if (mat.mtoon) {
    // VRMC_materials_mtoon 1.0: shading = linearstep(−1 + toony, 1 − toony,
    // N·L + shift), its colours linear.
    const scene::GltfMToon& t = *mat.mtoon;
    s.source = "VRMC_materials_mtoon";
    for (std::size_t c = 0; c < 3; ++c) s.shade_colour[c] = static_cast<float>(t.shade_color[c]);
    s.shade_from = static_cast<float>(-1.0 + t.shading_toony - t.shading_shift);
    s.shade_to = static_cast<float>(1.0 - t.shading_toony - t.shading_shift);
    if (t.shade_multiply_texture) shade_texture = t.shade_multiply_texture->texture;
    for (std::size_t c = 0; c < 3; ++c) s.rim_colour[c] = static_cast<float>(t.rim_color[c]);
    s.rim_fresnel_power = static_cast<float>(t.rim_fresnel_power);
    s.rim_lift = static_cast<float>(t.rim_lift);
    s.rim_lighting_mix = static_cast<float>(t.rim_lighting_mix);
    if (t.rim_multiply_texture) rim_texture = t.rim_multiply_texture->texture;
    for (std::size_t c = 0; c < 3; ++c) s.matcap_colour[c] = static_cast<float>(t.matcap[c]);
    if (t.matcap_texture) matcap_texture = t.matcap_texture->texture;
    if (t.shading_shift_texture) {
      shift_texture = t.shading_shift_texture->texture;
      s.shift_scale = static_cast<float>(t.shading_shift_texture->scale);
    }
    s.outline_mode = t.outline_width_mode == scene::MToonOutlineWidthMode::kWorldCoordinates
                         ? MToonShading::OutlineMode::kWorld
                     : t.outline_width_mode == scene::MToonOutlineWidthMode::kScreenCoordinates
                         ? MToonShading::OutlineMode::kScreen
                         : MToonShading::OutlineMode::kNone;
    s.outline_width = static_cast<float>(t.outline_width);
    for (std::size_t c = 0; c < 3; ++c)
      s.outline_colour[c] = static_cast<float>(t.outline_color[c]);
    s.outline_lighting_mix = static_cast<float>(t.outline_lighting_mix);
    if (t.outline_width_multiply_texture)
      outline_texture = t.outline_width_multiply_texture->texture;
    s.uv_scroll_x = static_cast<float>(t.uv_animation_scroll_x);
    s.uv_scroll_y = static_cast<float>(t.uv_animation_scroll_y);
    s.uv_rotation = static_cast<float>(t.uv_animation_rotation);
    if (t.uv_animation_mask_texture) uv_mask_texture = t.uv_animation_mask_texture->texture;
  } else {
    const auto found = vrm_materials_.find(mat.name);
    if (found == vrm_materials_.end() || found->second->shader != "VRM/MToon")
      return std::optional<MToonShading>{};
    const scene::VrmMaterialProperties* p = found->second;
    // VRM 0.x MToon: shading = linearstep(_ShadeShift,
    // lerp(1, _ShadeShift, _ShadeToony), N·L); Unity's colours are sRGB.
    // The shader's defaults where a property is missing.
    s.source = "VRM 0.x MToon";
    auto number = [&](const char* name, double fallback) {
      auto it = p->float_properties.find(name);
      return it != p->float_properties.end() ? it->second : fallback;
    };
    const double shift = number("_ShadeShift", 0.0);
    const double toony = number("_ShadeToony", 0.9);
    s.shade_from = static_cast<float>(shift);
    s.shade_to = static_cast<float>(1.0 + (shift - 1.0) * toony);
    std::array<double, 4> shade{0.97, 0.81, 0.86, 1.0};
    if (auto it = p->vector_properties.find("_ShadeColor"); it != p->vector_properties.end())
      shade = it->second;
    for (std::size_t c = 0; c < 3; ++c) s.shade_colour[c] = srgb_channel_to_linear(shade[c]);
    if (auto it = p->texture_properties.find("_ShadeTexture"); it != p->texture_properties.end())
      shade_texture = it->second;
    std::array<double, 4> rim{0, 0, 0, 1};
    if (auto it = p->vector_properties.find("_RimColor"); it != p->vector_properties.end())
      rim = it->second;
    for (std::size_t c = 0; c < 3; ++c) s.rim_colour[c] = srgb_channel_to_linear(rim[c]);
    s.rim_fresnel_power = static_cast<float>(number("_RimFresnelPower", 1.0));
    s.rim_lift = static_cast<float>(number("_RimLift", 0.0));
    s.rim_lighting_mix = static_cast<float>(number("_RimLightingMix", 0.0));
    if (auto it = p->texture_properties.find("_RimTexture"); it != p->texture_properties.end())
      rim_texture = it->second;
    // 0.x's additive sphere map is its matcap, at full strength.
    if (auto it = p->texture_properties.find("_SphereAdd"); it != p->texture_properties.end())
      matcap_texture = it->second;
    // The outline and UV animation as three-vrm ports them to MToon 1.0:
    // width in centimetres, the colour sRGB, the lighting mix only in the
    // "mixed lighting" colour mode; Unity's v axis points up.
    const double mode = number("_OutlineWidthMode", 0.0);
    s.outline_mode = mode == 1.0   ? MToonShading::OutlineMode::kWorld
                     : mode == 2.0 ? MToonShading::OutlineMode::kScreen
                                   : MToonShading::OutlineMode::kNone;
    s.outline_width = static_cast<float>(0.01 * number("_OutlineWidth", 0.0));
    std::array<double, 4> outline{0, 0, 0, 1};
    if (auto it = p->vector_properties.find("_OutlineColor"); it != p->vector_properties.end())
      outline = it->second;
    for (std::size_t c = 0; c < 3; ++c) s.outline_colour[c] = srgb_channel_to_linear(outline[c]);
    s.outline_lighting_mix = number("_OutlineColorMode", 0.0) == 1.0
                                 ? static_cast<float>(number("_OutlineLightingMix", 1.0))
                                 : 0.0F;
    if (auto it = p->texture_properties.find("_OutlineWidthTexture");
        it != p->texture_properties.end())
      outline_texture = it->second;
    s.uv_scroll_x = static_cast<float>(number("_UvAnimScrollX", 0.0));
    s.uv_scroll_y = static_cast<float>(-number("_UvAnimScrollY", 0.0));
    s.uv_rotation = static_cast<float>(number("_UvAnimRotation", 0.0));
    if (auto it = p->texture_properties.find("_UvAnimMaskTexture");
        it != p->texture_properties.end())
      uv_mask_texture = it->second;
  }
  for (auto [texture, slot_out] :
       {std::pair{shade_texture, &s.shade_texture}, std::pair{rim_texture, &s.rim_texture},
        std::pair{matcap_texture, &s.matcap_texture}, std::pair{shift_texture, &s.shift_texture},
        std::pair{outline_texture, &s.outline_width_texture},
        std::pair{uv_mask_texture, &s.uv_mask_texture},
        std::pair{mat.emissive_texture ? std::optional<std::size_t>(mat.emissive_texture->texture)
                                       : std::nullopt,
                  &s.emissive_texture}}) {
    if (!texture) continue;
    auto slot = texture_image(*texture);
    if (!slot) return std::move(slot).error();
    *slot_out = *slot;
  }
  for (std::size_t c = 0; c < 3; ++c) s.emissive[c] = static_cast<float>(mat.emissive_factor[c]);
  return std::optional<MToonShading>{std::move(s)};
}

// The part: the mapping file, the VRM humanoid bone, VRM / alpha, then names.
core::Result<std::string> Loader::part_expression(const scene::GltfPrimitive& prim,
                                                  std::size_t mesh) {
  if (!asset_.vrm) return std::string();
  // Whether target t of the mesh moves a vertex of this primitive.
  const auto moves = [&](std::size_t t) -> core::Result<bool> {
    if (t >= prim.targets.size()) return false;
    const auto a = prim.targets[t].find("POSITION");
    if (!a) return false;
    auto delta = doc_.read_accessor_floats(*a);
    if (!delta) return std::move(delta).error();
    return std::any_of(delta->begin(), delta->end(), [](float d) { return d != 0.0F; });
  };
  for (const auto& group :
       {std::vector<std::string>{"blink", "blinkLeft", "blinkRight"},
        std::vector<std::string>{"lookUp", "lookDown", "lookLeft", "lookRight"}})
    for (const scene::VrmExpression& e : asset_.vrm->expressions) {
      if (std::find(group.begin(), group.end(), e.name) == group.end()) continue;
      for (const scene::VrmMorphBind& b : e.binds) {
        if (b.mesh != mesh || b.weight == 0) continue;
        auto m = moves(b.target);
        if (!m) return std::move(m).error();
        if (*m) return e.name;
      }
    }
  return std::string();
}

core::Status Loader::choose_part(const scene::GltfPrimitive& prim, RenderPrimitive& out, bool blend,
                                 std::size_t n, const std::vector<std::uint32_t>& joints,
                                 const std::vector<float>& weights) {
  std::optional<PartKind> kind;
  if (options_.parts) {
    for (const std::string& name : {out.material_name, out.mesh_name})
      if (auto it = options_.parts->by_name.find(name);
          !kind && !name.empty() && it != options_.parts->by_name.end()) {
        kind = it->second;
        out.kind_reason = "parts file";
      }
  }
  if (!kind) {
    const std::string bone = part_bone(bone_of_, asset_, n, joints, weights);
    if ((kind = kind_from_bone(bone))) out.kind_reason = "VRM humanoid bone " + bone;
  }
  if (!kind) {
    auto expression = part_expression(prim, *asset_.nodes[n].mesh);
    if (!expression) return std::move(expression).error();
    if (!expression->empty()) {
      kind = expression->starts_with("blink") ? PartKind::kFace : PartKind::kEye;
      out.kind_reason = "VRM expression " + *expression;
    }
  }
  if (!kind) {
    auto vm = vrm_materials_.find(out.material_name);
    if (blend || (vm != vrm_materials_.end() && vm->second->transparent())) {
      kind = PartKind::kTransparent;
      out.kind_reason = blend ? "alphaMode BLEND" : "VRM render type";
    }
  }
  if (!kind) {
    if ((kind = kind_from_name(out.material_name))) {
      out.kind_reason = "material name";
    } else if ((kind = kind_from_name(out.mesh_name))) {
      out.kind_reason = "mesh name";
    }
  }
  out.kind = kind.value_or(PartKind::kBody);
  if (!kind) out.kind_reason = "default";
  return core::Ok{};
}

core::Result<RenderModel> Loader::run() {
  if (asset_.vrm && asset_.vrm->version == "0.x") model_.facing_z = -1.0F;
  if (asset_.vrm) {
    for (const scene::VrmMaterialProperties& m : asset_.vrm->materials) vrm_materials_[m.name] = &m;
    for (const scene::VrmHumanBone& b : asset_.vrm->human_bones) bone_of_.emplace(b.node, b.bone);
    for (const scene::VrmExpression& e : asset_.vrm->expressions)
      model_.expressions.push_back(e.name);
  }
  auto bound = expression_weights(asset_, options_.expressions);
  if (!bound) return std::move(bound).error();
  bound_ = std::move(*bound);
  place_nodes();
  for (std::size_t n : drawn_) {
    auto joint_matrix = joint_matrices(n);
    if (!joint_matrix) return std::move(joint_matrix).error();
    const std::vector<double> morph = morph_weights(n);
    const scene::GltfMesh& mesh = asset_.meshes[*asset_.nodes[n].mesh];
    for (const scene::GltfPrimitive& prim : mesh.primitives) {
      if (prim.mode != 4) {
        model_.warnings.push_back(prim.pointer + ": mode " + std::to_string(prim.mode) +
                                  " is not a triangle list; skipped");
        continue;
      }
      RenderPrimitive out;
      out.pointer = prim.pointer;
      out.mesh_name = mesh.name;
      std::vector<std::uint32_t> joints;
      std::vector<float> weights;
      if (auto st = geometry(prim, n, *joint_matrix, morph, out, joints, weights); !st)
        return std::move(st).error();
      auto blend = material(prim, out);
      if (!blend) return std::move(blend).error();
      if (auto st = choose_part(prim, out, *blend, n, joints, weights); !st)
        return std::move(st).error();
      if (!out.indices.empty()) model_.primitives.push_back(std::move(out));
    }
  }
  if (model_.primitives.empty())
    return model_error("the model has no triangles to draw", "/meshes");
  bool first = true;
  for (const RenderPrimitive& prim : model_.primitives)
    for (const RenderVertex& v : prim.vertices)
      for (std::size_t c = 0; c < 3; ++c) {
        if (!std::isfinite(v.position[c]))
          return model_error("a vertex position is not finite", prim.pointer);
        model_.min[c] = first ? v.position[c] : std::min(model_.min[c], v.position[c]);
        model_.max[c] = first ? v.position[c] : std::max(model_.max[c], v.position[c]);
        first = first && c < 2;
      }
  return std::move(model_);
}

}  // namespace

core::Result<RenderModel> load_render_model(scene::GltfDocument& doc,
                                            const ModelLoadOptions& options) {
  return Loader(doc, options).run();
}

}  // namespace charkit::render
