// The C API's BEM package calls (charkit/capi/c_api.h, "BEM packages"): a
// package opened whole for an editor (every mesh and draw, as bem export
// builds them in the package's own axes), the selection a settings string
// makes, and packing meshes given as arrays into a template package. The
// work is bem's (load_package, make_plan, export_glb, pack_scene, the
// writer); this file moves it across the C boundary.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/inspect.h"
#include "charkit/bem/load.h"
#include "charkit/bem/pack.h"
#include "charkit/bem/pack_spec.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/settings.h"
#include "charkit/bem/writer.h"
#include "charkit/capi/c_api.h"
#include "charkit/capi/detail.h"
#include "charkit/capi/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/deformer/npy.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/gltf_writer.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"

struct charkit_bem_package {
  std::vector<std::uint8_t> bytes;  // the file; the container views into it
  charkit::bem::LoadedPackage loaded;
  charkit::bem::GlbExport exported;
  charkit::core::Json facts;
};

using namespace charkit;
using capi::bad_argument;
using capi::fail;
using capi::guarded;
using core::Json;

namespace {

bool all_digits(const std::string& s, std::size_t max_len) {
  return !s.empty() && s.size() <= max_len &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Json error_json(const core::Error& e) {
  return Json{{"code", e.code}, {"message", e.message}, {"location", e.location.to_string()}};
}

/// The scene facts an editor needs beside inspect_package's manifest facts:
/// per exported mesh its BEM mesh, components, attributes (glTF names and
/// component counts), primitives (one per draw) and morph targets.
Json scene_facts(const bem::Model& model, const bem::Plan& plan, const scene::Scene& scene) {
  Json meshes = Json::array();
  std::size_t s = 0;
  for (const bem::PlannedMesh& pm : plan.meshes) {
    if (pm.segments.empty() || s >= scene.meshes.size()) continue;  // not exported
    const scene::Mesh& m = scene.meshes[s++];
    Json attributes = Json::array();
    auto add = [&](const std::string& name, std::size_t count, int components) {
      if (count) attributes.push_back(Json{{"name", name}, {"components", components}});
    };
    add("POSITION", m.positions.size(), 3);
    add("NORMAL", m.normals.size(), 3);
    add("TANGENT", m.tangents.size(), 4);
    for (std::size_t t = 0; t < m.texcoords.size(); ++t)
      add("TEXCOORD_" + std::to_string(t), m.texcoords[t].size(), 2);
    add("COLOR_0", m.colors.size(), 4);
    add("JOINTS_0", m.joints.size(), 4);
    add("WEIGHTS_0", m.weights.size(), 4);
    for (const scene::CustomAttribute& c : m.custom)
      add(c.name, c.values.size(), static_cast<int>(c.components));
    Json primitives = Json::array();
    for (std::size_t p = 0; p < m.primitives.size() && p < pm.draws.size(); ++p) {
      const bem::Draw& draw = model.meshes[pm.mesh].draws[pm.draws[p]];
      primitives.push_back(Json{{"draw", pm.draws[p]},
                                {"material", draw.material_name},
                                {"indices", m.primitives[p].indices.size()}});
    }
    Json targets = Json::array();
    for (const scene::MorphTarget& t : m.targets)
      targets.push_back(Json{{"name", t.name}, {"weight", t.weight}});
    Json components = Json::array();
    for (std::uint32_t c : pm.components)
      components.push_back(Json{{"component", c}, {"meshName", model.components[c].mesh_name}});
    Json bones = Json::array();
    for (const bem::PaletteBone& b : model.meshes[pm.mesh].bones) bones.push_back(b.name);
    meshes.push_back(Json{{"name", m.name},
                          {"mesh", pm.mesh},
                          {"vertices", m.vertex_count()},
                          {"components", std::move(components)},
                          {"attributes", std::move(attributes)},
                          {"primitives", std::move(primitives)},
                          {"targets", std::move(targets)},
                          {"bones", std::move(bones)}});
  }
  Json joints = Json::array();
  Json parents = Json::array();
  Json inverse_binds = Json::array();
  if (scene.skeleton) {
    const scene::Skeleton& k = *scene.skeleton;
    for (std::size_t j = 0; j < k.joint_count(); ++j) {
      joints.push_back(k.joint_names[j]);
      parents.push_back(j < k.parents.size() ? k.parents[j] : -1);
      if (j < k.inverse_bind_matrices.size()) {
        Json row = Json::array();
        for (float v : k.inverse_bind_matrices[j]) row.push_back(v);
        inverse_binds.push_back(std::move(row));
      }
    }
  }
  Json images = Json::array();
  for (const scene::Image& img : scene.images) {
    Json texture = nullptr;
    for (std::size_t t = 0; t < model.textures.size(); ++t) {
      const std::string& name = model.textures[t].original_name;
      if (img.name == (name.empty() ? "texture_" + std::to_string(t) : name)) texture = t;
    }
    images.push_back(Json{{"name", img.name}, {"texture", texture}});
  }
  return Json{{"meshes", std::move(meshes)},
              {"skeleton", Json{{"joints", std::move(joints)},
                                {"parents", std::move(parents)},
                                {"inverseBindMatrices", std::move(inverse_binds)}}},
              {"images", std::move(images)}};
}

charkit_status copy_floats_out(const std::vector<float>& values, float* out, std::uint64_t capacity,
                               std::uint64_t* count) {
  *count = values.size();
  if (!out) return CHARKIT_OK;
  if (capacity < values.size())
    return bad_argument("capacity " + std::to_string(capacity) + " is below the " +
                        std::to_string(values.size()) + " values");
  std::copy(values.begin(), values.end(), out);
  return CHARKIT_OK;
}

/// The floats of one exported attribute (glTF names; TARGET_k: morph
/// target k's displacements), vertex by vertex; nullopt for an unknown name.
std::optional<std::vector<float>> attribute_values(const scene::Mesh& m, const std::string& name) {
  std::vector<float> v;
  auto vec3 = [&](const std::vector<scene::Vec3>& a) {
    for (const scene::Vec3& x : a) v.insert(v.end(), x.begin(), x.end());
  };
  auto vec4 = [&](const std::vector<scene::Vec4>& a) {
    for (const scene::Vec4& x : a) v.insert(v.end(), x.begin(), x.end());
  };
  if (name == "POSITION") {
    vec3(m.positions);
  } else if (name == "NORMAL") {
    vec3(m.normals);
  } else if (name == "TANGENT") {
    vec4(m.tangents);
  } else if (name == "COLOR_0") {
    vec4(m.colors);
  } else if (name == "WEIGHTS_0") {
    vec4(m.weights);
  } else if (name == "JOINTS_0") {
    for (const auto& j : m.joints)
      for (std::uint16_t x : j) v.push_back(static_cast<float>(x));
  } else if (name.rfind("TEXCOORD_", 0) == 0) {
    const std::string n = name.substr(9);
    if (!all_digits(n, 2)) return std::nullopt;
    const std::size_t set = std::stoul(n);
    if (set >= m.texcoords.size()) return std::nullopt;
    for (const scene::Vec2& x : m.texcoords[set]) v.insert(v.end(), x.begin(), x.end());
  } else if (name.rfind("TARGET_", 0) == 0) {
    const std::string n = name.substr(7);
    if (!all_digits(n, 4)) return std::nullopt;
    const std::size_t t = std::stoul(n);
    if (t >= m.targets.size()) return std::nullopt;
    vec3(m.targets[t].positions);
  } else {
    for (const scene::CustomAttribute& c : m.custom)
      if (c.name == name) return c.values;
    return std::nullopt;
  }
  return v;
}

/// The arrays charkit_bem_pack_arrays reads, by index.
struct ArrayTable {
  const void* const* arrays;
  const std::uint64_t* bytes;
  std::uint64_t count;
};

/// Array `ref` (a JSON index into the table) as `count` values of T;
/// `where` names the JSON place in errors.
template <typename T>
core::Result<std::vector<T>> read_array(const ArrayTable& table, const Json& ref,
                                        std::uint64_t count, const std::string& where) {
  if (!ref.is_number_unsigned() || ref.get<std::uint64_t>() >= table.count)
    return core::make_error(capi::codes::CAPI_ARGUMENT,
                            "scene_json" + where + ": not an index into the " +
                                std::to_string(table.count) + " arrays");
  const std::uint64_t i = ref.get<std::uint64_t>();
  if (count > std::numeric_limits<std::uint64_t>::max() / sizeof(T) ||
      table.bytes[i] != count * sizeof(T))
    return core::make_error(capi::codes::CAPI_ARGUMENT,
                            "scene_json" + where + ": array " + std::to_string(i) + " has " +
                                std::to_string(table.bytes[i]) + " bytes, not " +
                                std::to_string(count) + " x " + std::to_string(sizeof(T)));
  if (count && !table.arrays[i])
    return core::make_error(capi::codes::CAPI_ARGUMENT,
                            "scene_json" + where + ": array " + std::to_string(i) + " is NULL");
  std::vector<T> out(count);
  if (count) std::memcpy(out.data(), table.arrays[i], count * sizeof(T));
  return out;
}

core::Error description_error(const std::string& where, const std::string& what) {
  return core::make_error(capi::codes::CAPI_ARGUMENT, "scene_json" + where + ": " + what);
}

/// `count` float tuples of N as the scene's vector type.
template <std::size_t N>
std::vector<std::array<float, N>> tuples(const std::vector<float>& v) {
  std::vector<std::array<float, N>> out(v.size() / N);
  for (std::size_t i = 0; i < out.size(); ++i)
    std::copy_n(v.begin() + static_cast<std::ptrdiff_t>(i * N), N, out[i].begin());
  return out;
}

/// The floats per vertex of attribute `name` (0: not a name the packer takes).
std::uint32_t components_of(const std::string& name, const Json& attribute) {
  if (name == "POSITION" || name == "NORMAL") return 3;
  if (name == "TANGENT" || name == "COLOR_0" || name == "WEIGHTS_0" || name == "JOINTS_0") return 4;
  if (name.rfind("TEXCOORD_", 0) == 0 && all_digits(name.substr(9), 2)) return 2;
  if (name.size() > 1 && name[0] == '_') {
    auto c = attribute.find("components");
    if (c != attribute.end() && c->is_number_unsigned() && c->get<std::uint64_t>() >= 1 &&
        c->get<std::uint64_t>() <= 4)
      return static_cast<std::uint32_t>(c->get<std::uint64_t>());
  }
  return 0;
}

/// The scene charkit_bem_pack_arrays describes (docs/c_api.md): one node
/// per mesh, one flat skeleton of every mesh's joints (JOINTS_0 renumbered
/// into it), materials by name, images encoded as PNG.
core::Result<scene::Scene> scene_from_arrays(const Json& d, const ArrayTable& table) {
  if (!d.is_object()) return description_error("", "not a JSON object");
  for (auto it = d.begin(); it != d.end(); ++it)
    if (it.key() != "meshes" && it.key() != "images")
      return description_error("/" + it.key(), "unknown key (meshes, images)");
  auto meshes = d.find("meshes");
  if (meshes == d.end() || !meshes->is_array() || meshes->empty())
    return description_error("/meshes", "needs an array of at least one mesh");
  scene::Scene scene;
  std::map<std::string, std::uint32_t> material_of_name;
  std::map<std::string, std::uint16_t> joint_of_name;
  std::vector<std::string> joint_names;
  for (std::size_t k = 0; k < meshes->size(); ++k) {
    const Json& m = (*meshes)[k];
    const std::string mw = "/meshes/" + std::to_string(k);
    if (!m.is_object()) return description_error(mw, "not an object");
    for (auto it = m.begin(); it != m.end(); ++it)
      if (it.key() != "name" && it.key() != "node" && it.key() != "attributes" &&
          it.key() != "primitives" && it.key() != "targets" && it.key() != "joints")
        return description_error(mw + "/" + it.key(),
                                 "unknown key (name, node, attributes, primitives, targets, "
                                 "joints)");
    scene::Mesh mesh;
    auto name = m.find("name");
    if (name == m.end() || !name->is_string() || name->get<std::string>().empty())
      return description_error(mw + "/name", "needs a non-empty string");
    mesh.name = name->get<std::string>();
    scene::Node node;
    node.name = mesh.name;
    if (auto n = m.find("node"); n != m.end()) {
      if (!n->is_string()) return description_error(mw + "/node", "needs a string");
      node.name = n->get<std::string>();
    }
    auto attributes = m.find("attributes");
    if (attributes == m.end() || !attributes->is_array())
      return description_error(mw + "/attributes", "needs an array");
    // POSITION first: it sets the vertex count.
    const Json* position = nullptr;
    for (const Json& a : *attributes)
      if (a.is_object() && a.value("name", Json()) == "POSITION") position = &a;
    if (!position) return description_error(mw + "/attributes", "needs POSITION");
    auto pos_ref = position->find("data");
    if (pos_ref == position->end() || !pos_ref->is_number_unsigned() ||
        pos_ref->get<std::uint64_t>() >= table.count)
      return description_error(mw + "/attributes", "POSITION's data is not an array index");
    const std::uint64_t vertices = table.bytes[pos_ref->get<std::uint64_t>()] / 12;
    std::vector<std::array<std::uint16_t, 4>> local_joints;
    std::set<std::string> seen;
    for (std::size_t a = 0; a < attributes->size(); ++a) {
      const Json& attr = (*attributes)[a];
      const std::string aw = mw + "/attributes/" + std::to_string(a);
      if (!attr.is_object() || !attr.contains("name") || !attr["name"].is_string() ||
          !attr.contains("data"))
        return description_error(aw, "needs {\"name\", \"data\"}");
      for (auto it = attr.begin(); it != attr.end(); ++it)
        if (it.key() != "name" && it.key() != "data" && it.key() != "components")
          return description_error(aw + "/" + it.key(), "unknown key (name, data, components)");
      const std::string an = attr["name"].get<std::string>();
      if (!seen.insert(an).second) return description_error(aw, "a second " + an);
      const std::uint32_t comps = components_of(an, attr);
      if (!comps)
        return description_error(aw + "/name",
                                 "'" + an +
                                     "' is none of POSITION, NORMAL, TANGENT, TEXCOORD_n, COLOR_0, "
                                     "JOINTS_0, WEIGHTS_0, or _NAME with components 1..4");
      if (auto c = attr.find("components");
          c != attr.end() && (!c->is_number_unsigned() || c->get<std::uint64_t>() != comps))
        return description_error(aw + "/components", an + " has " + std::to_string(comps));
      if (an == "JOINTS_0") {
        auto j = read_array<std::uint16_t>(table, attr["data"], vertices * 4, aw + "/data");
        if (!j) return std::move(j).error();
        local_joints.resize(vertices);
        for (std::size_t v = 0; v < vertices; ++v)
          std::copy_n(j->begin() + static_cast<std::ptrdiff_t>(v * 4), 4, local_joints[v].begin());
        continue;
      }
      auto f = read_array<float>(table, attr["data"], vertices * comps, aw + "/data");
      if (!f) return std::move(f).error();
      if (an == "POSITION") {
        mesh.positions = tuples<3>(*f);
      } else if (an == "NORMAL") {
        mesh.normals = tuples<3>(*f);
      } else if (an == "TANGENT") {
        mesh.tangents = tuples<4>(*f);
      } else if (an == "COLOR_0") {
        mesh.colors = tuples<4>(*f);
      } else if (an == "WEIGHTS_0") {
        mesh.weights = tuples<4>(*f);
      } else if (an[0] == '_') {
        mesh.custom.push_back({an, comps, std::move(*f)});
      } else {
        const std::size_t set = std::stoul(an.substr(9));
        if (mesh.texcoords.size() <= set) mesh.texcoords.resize(set + 1);
        mesh.texcoords[set] = tuples<2>(*f);
      }
    }
    for (std::size_t t = 0; t < mesh.texcoords.size(); ++t)
      if (mesh.texcoords[t].size() != vertices)
        return description_error(mw + "/attributes", "TEXCOORD_" + std::to_string(t) +
                                                         " is missing (UV sets are numbered "
                                                         "from 0 without gaps)");
    // Joints: names per mesh; JOINTS_0 indexes them. The scene has one
    // skeleton of every mesh's joints.
    std::vector<std::uint16_t> global;
    if (auto j = m.find("joints"); j != m.end()) {
      if (!j->is_array()) return description_error(mw + "/joints", "needs an array of names");
      for (std::size_t n = 0; n < j->size(); ++n) {
        if (!(*j)[n].is_string() || (*j)[n].get<std::string>().empty())
          return description_error(mw + "/joints/" + std::to_string(n), "needs a bone name");
        const std::string& bone = (*j)[n].get_ref<const std::string&>();
        auto [it, added] = joint_of_name.try_emplace(bone, 0);
        if (added) {
          if (joint_names.size() >= 0xFFFF)
            return description_error(mw + "/joints", "more than 65535 joints in all");
          it->second = static_cast<std::uint16_t>(joint_names.size());
          joint_names.push_back(bone);
        }
        global.push_back(it->second);
      }
    }
    if (local_joints.empty() != mesh.weights.empty())
      return description_error(mw + "/attributes", "JOINTS_0 and WEIGHTS_0 come together");
    for (const auto& v : local_joints) {
      std::array<std::uint16_t, 4> g{};
      for (std::size_t s = 0; s < 4; ++s) {
        if (v[s] >= global.size())
          return description_error(mw + "/attributes",
                                   "JOINTS_0 uses joint " + std::to_string(v[s]) +
                                       " of a mesh with " + std::to_string(global.size()) +
                                       " joints");
        g[s] = global[v[s]];
      }
      mesh.joints.push_back(g);
    }
    auto primitives = m.find("primitives");
    if (primitives == m.end() || !primitives->is_array())
      return description_error(mw + "/primitives", "needs an array");
    for (std::size_t p = 0; p < primitives->size(); ++p) {
      const Json& pj = (*primitives)[p];
      const std::string pw = mw + "/primitives/" + std::to_string(p);
      if (!pj.is_object() || !pj.contains("indices") || !pj.contains("material") ||
          !pj["material"].is_string() || pj.size() != 3 || !pj.contains("count"))
        return description_error(pw, "needs {\"indices\", \"count\", \"material\"}");
      if (!pj["count"].is_number_unsigned())
        return description_error(pw + "/count", "needs an index count");
      auto idx = read_array<std::uint32_t>(table, pj["indices"], pj["count"].get<std::uint64_t>(),
                                           pw + "/indices");
      if (!idx) return std::move(idx).error();
      const std::string material = pj["material"].get<std::string>();
      auto [it, added] = material_of_name.try_emplace(
          material, static_cast<std::uint32_t>(scene.materials.size()));
      if (added) {
        scene::Material mat;
        mat.name = material;
        scene.materials.push_back(std::move(mat));
      }
      mesh.primitives.push_back({std::move(*idx), it->second});
    }
    if (auto targets = m.find("targets"); targets != m.end()) {
      if (!targets->is_array()) return description_error(mw + "/targets", "needs an array");
      for (std::size_t t = 0; t < targets->size(); ++t) {
        const Json& tj = (*targets)[t];
        const std::string tw = mw + "/targets/" + std::to_string(t);
        if (!tj.is_object() || !tj.contains("name") || !tj["name"].is_string() ||
            !tj.contains("positions"))
          return description_error(tw, "needs {\"name\", \"positions\", \"weight\"}");
        for (auto it = tj.begin(); it != tj.end(); ++it)
          if (it.key() != "name" && it.key() != "positions" && it.key() != "weight")
            return description_error(tw + "/" + it.key(), "unknown key (name, positions, weight)");
        scene::MorphTarget target;
        target.name = tj["name"].get<std::string>();
        if (auto w = tj.find("weight"); w != tj.end()) {
          if (!w->is_number()) return description_error(tw + "/weight", "needs a number");
          target.weight = w->get<float>();
        }
        auto f = read_array<float>(table, tj["positions"], vertices * 3, tw + "/positions");
        if (!f) return std::move(f).error();
        target.positions = tuples<3>(*f);
        mesh.targets.push_back(std::move(target));
      }
    }
    node.mesh = static_cast<std::uint32_t>(scene.meshes.size());
    scene.nodes.push_back(std::move(node));
    scene.meshes.push_back(std::move(mesh));
  }
  if (!joint_names.empty()) {
    scene::Skeleton skeleton;
    skeleton.joint_names = joint_names;
    skeleton.parents.assign(joint_names.size(), -1);  // flat, as bem export writes it
    scene.skeleton = std::move(skeleton);
  }
  if (auto images = d.find("images"); images != d.end()) {
    if (!images->is_array()) return description_error("/images", "needs an array");
    for (std::size_t i = 0; i < images->size(); ++i) {
      const Json& ij = (*images)[i];
      const std::string iw = "/images/" + std::to_string(i);
      if (!ij.is_object() || ij.size() != 4 || !ij.contains("name") || !ij["name"].is_string() ||
          !ij.contains("width") || !ij["width"].is_number_unsigned() || !ij.contains("height") ||
          !ij["height"].is_number_unsigned() || !ij.contains("pixels"))
        return description_error(iw, "needs {\"name\", \"width\", \"height\", \"pixels\"}");
      const std::uint64_t w = ij["width"].get<std::uint64_t>();
      const std::uint64_t h = ij["height"].get<std::uint64_t>();
      if (w == 0 || h == 0 || w > 16384 || h > 16384)
        return description_error(iw, "width and height must be 1..16384");
      scene::RgbaImage rgba;
      rgba.width = static_cast<std::uint32_t>(w);
      rgba.height = static_cast<std::uint32_t>(h);
      auto px = read_array<std::uint8_t>(table, ij["pixels"], w * h * 4, iw + "/pixels");
      if (!px) return std::move(px).error();
      rgba.pixels = std::move(*px);
      auto png = scene::encode_png(rgba);
      if (!png) return std::move(png).error();
      scene.images.push_back({ij["name"].get<std::string>(), std::move(*png)});
    }
  }
  return scene;
}

/// Packs `scene` into the template package at `template_path` (bem pack's
/// packer, writer and validator) and sets *out_json to the report; writes
/// `output_path` when the result is valid and it is not NULL or empty.
/// A scene that cannot be packed is CHARKIT_OK with "ok": false.
charkit_status pack_into_template(const char* template_path, const scene::Scene& scene,
                                  const bem::PackOptions& po, bool zip, const char* output_path,
                                  char** out_json) {
  auto file = core::MappedFile::open(template_path);
  if (!file) return fail(file.error());
  bem::LoadedPackage loaded = bem::load_package(file->bytes());
  if (!loaded.ok())
    return fail(core::make_error(bem::codes::BEM_PACK_TEMPLATE,
                                 "the template is not a valid package: " + loaded.error));
  auto content = bem::read_package_content(file->bytes());
  if (!content) return fail(content.error());
  Json result{{"ok", false}};
  // The scene goes to the packer through the scene layer's writer and
  // reader (the packer reads a loaded glTF document).
  auto glb = scene::write_glb(scene);
  if (!glb) {
    result["error"] = error_json(glb.error());
    *out_json = capi::dup_string(result.dump());
    return CHARKIT_OK;
  }
  auto doc = scene::GltfDocument::load(*glb);
  if (!doc) {
    result["error"] = error_json(doc.error());
    *out_json = capi::dup_string(result.dump());
    return CHARKIT_OK;
  }
  auto packed = bem::pack_scene(*content, *loaded.model, *doc, po);
  if (!packed) {
    result["error"] = error_json(packed.error());
    *out_json = capi::dup_string(result.dump());
    return CHARKIT_OK;
  }
  Json done = bem::pack_report_json(*packed);
  for (auto& [key, value] : done.items()) result[key] = std::move(value);
  core::Report report;
  auto written = zip ? bem::write_zip(packed->content, {}, &report)
                     : bem::write_binary(packed->content, {}, &report);
  result["issues"] = Json::parse(report.to_json_issues());
  if (!written) {
    result["error"] = error_json(written.error());
    *out_json = capi::dup_string(result.dump());
    return CHARKIT_OK;
  }
  result["ok"] = true;
  result["version"] = "1." + std::to_string(written->stats.minor);
  result["bytes"] = written->stats.file_bytes;
  result["payloads"] = written->stats.payloads_out;
  result["container"] = zip ? "zip" : "binary";
  if (output_path && *output_path) {
    if (auto st = deformer::write_file_bytes(output_path, written->bytes); !st)
      return fail(st.error());
    result["uri"] = output_path;
  }
  *out_json = capi::dup_string(result.dump());
  return CHARKIT_OK;
}

}  // namespace

charkit_status charkit_bem_open(const char* path, charkit_bem_package** out) {
  return guarded([&] {
    if (!path || !out) return bad_argument("path or out is NULL");
    *out = nullptr;
    auto file = core::MappedFile::open(path);
    if (!file) return fail(file.error());
    auto pkg = std::make_unique<charkit_bem_package>();
    const core::Bytes bytes = file->bytes();
    pkg->bytes.assign(bytes.begin(), bytes.end());
    pkg->loaded = bem::load_package(pkg->bytes);
    if (!pkg->loaded.ok())
      return fail(core::make_error(capi::codes::CAPI_BEM_INVALID,
                                   std::string(path) + ": " + pkg->loaded.error));
    const bem::Model& model = *pkg->loaded.model;
    bem::ExportOptions eo;
    eo.plan.every_draw = true;
    eo.unity_to_gltf = false;  // the package's own axes, UVs and rows
    eo.morph_targets = true;
    auto exported = bem::export_glb(model, *pkg->loaded.package, bem::default_settings(model), eo);
    if (!exported) return fail(exported.error());
    pkg->exported = std::move(*exported);
    pkg->exported.glb.clear();
    pkg->exported.glb.shrink_to_fit();
    Json facts = scene_facts(model, pkg->exported.plan, pkg->exported.result.scene);
    facts["uri"] = path;
    facts["version"] = "1." + std::to_string(model.minor);
    facts["package"] = bem::inspect_package(pkg->bytes);
    facts["manifest"] = pkg->loaded.manifest;
    Json warnings = Json::array();
    for (const bem::ExportWarning& w : pkg->exported.result.warnings)
      warnings.push_back(Json{{"code", w.code}, {"message", w.message}, {"pointer", w.pointer}});
    facts["warnings"] = std::move(warnings);
    pkg->facts = std::move(facts);
    *out = pkg.release();
    return CHARKIT_OK;
  });
}

void charkit_bem_package_free(charkit_bem_package* package) {
  delete package;
}

charkit_status charkit_bem_package_json(const charkit_bem_package* package, char** out_json) {
  return guarded([&] {
    if (!package || !out_json) return bad_argument("package or out_json is NULL");
    *out_json = capi::dup_string(package->facts.dump());
    return CHARKIT_OK;
  });
}

charkit_status charkit_bem_mesh_floats(const charkit_bem_package* package, uint32_t mesh,
                                       const char* attribute, float* out, uint64_t capacity,
                                       uint64_t* count) {
  return guarded([&] {
    if (!package || !attribute || !count)
      return bad_argument("package, attribute or count is NULL");
    const auto& meshes = package->exported.result.scene.meshes;
    if (mesh >= meshes.size())
      return bad_argument("mesh " + std::to_string(mesh) + " of " + std::to_string(meshes.size()));
    auto values = attribute_values(meshes[mesh], attribute);
    if (!values)
      return bad_argument(std::string("mesh ") + std::to_string(mesh) + " has no attribute '" +
                          attribute + "'");
    return copy_floats_out(*values, out, capacity, count);
  });
}

charkit_status charkit_bem_mesh_indices(const charkit_bem_package* package, uint32_t mesh,
                                        uint32_t primitive, uint32_t* out, uint64_t capacity,
                                        uint64_t* count) {
  return guarded([&] {
    if (!package || !count) return bad_argument("package or count is NULL");
    const auto& meshes = package->exported.result.scene.meshes;
    if (mesh >= meshes.size() || primitive >= meshes[mesh].primitives.size())
      return bad_argument("mesh " + std::to_string(mesh) + " primitive " +
                          std::to_string(primitive) + " does not exist");
    const std::vector<std::uint32_t>& idx = meshes[mesh].primitives[primitive].indices;
    *count = idx.size();
    if (!out) return CHARKIT_OK;
    if (capacity < idx.size()) return bad_argument("capacity is below the index count");
    std::copy(idx.begin(), idx.end(), out);
    return CHARKIT_OK;
  });
}

charkit_status charkit_bem_image_rgba(const charkit_bem_package* package, uint32_t image,
                                      uint8_t* out, uint64_t capacity, uint32_t* width,
                                      uint32_t* height) {
  return guarded([&] {
    if (!package || !width || !height) return bad_argument("package, width or height is NULL");
    const auto& images = package->exported.result.scene.images;
    if (image >= images.size())
      return bad_argument("image " + std::to_string(image) + " of " +
                          std::to_string(images.size()));
    auto rgba = scene::decode_image(images[image].png);
    if (!rgba) return fail(rgba.error());
    *width = rgba->width;
    *height = rgba->height;
    if (!out) return CHARKIT_OK;
    if (capacity < rgba->pixels.size()) return bad_argument("capacity is below width*height*4");
    std::copy(rgba->pixels.begin(), rgba->pixels.end(), out);
    return CHARKIT_OK;
  });
}

charkit_status charkit_bem_selection_json(const charkit_bem_package* package, const char* options,
                                          const char* parameters, char** out_json) {
  return guarded([&] {
    if (!package || !out_json) return bad_argument("package or out_json is NULL");
    const bem::Model& model = *package->loaded.model;
    auto settings =
        bem::parse_settings(model, options ? options : "", parameters ? parameters : "");
    if (!settings) return fail(settings.error());
    auto plan = bem::make_plan(model, *settings);
    if (!plan) return fail(plan.error());
    Json draws = Json::array();
    for (const auto& [mesh, draw] : plan->draws) draws.push_back(Json::array({mesh, draw}));
    Json components = Json::array();
    for (const bem::PlannedComponent& pc : plan->components) {
      const char* op = pc.op == bem::Operation::kReplace ? "replace"
                       : pc.op == bem::Operation::kHide  ? "hide"
                                                         : "keep";
      Json c{{"component", pc.target}, {"operation", op}};
      if (pc.op == bem::Operation::kReplace) c["mesh"] = pc.mesh;
      components.push_back(std::move(c));
    }
    Json groups = Json::array();
    for (std::size_t g = 0; g < model.groups.size(); ++g)
      groups.push_back(Json{{"id", model.groups[g].id},
                            {"choice", model.groups[g].choices.at(settings->saved[g])},
                            {"available", settings->effective[g].has_value()}});
    Json ticks = Json::array();
    for (std::size_t p = 0; p < model.parameters.size(); ++p)
      ticks.push_back(Json{{"id", model.parameters[p].id},
                           {"tick", settings->saved_ticks[p]},
                           {"available", static_cast<bool>(settings->parameter_available[p])}});
    Json warnings = Json::array();
    for (const bem::SettingsWarning& w : settings->warnings)
      warnings.push_back(Json{{"code", w.code}, {"message", w.message}});
    *out_json = capi::dup_string(Json{
        {"draws", std::move(draws)},
        {"components", std::move(components)},
        {"groups", std::move(groups)},
        {"parameters", std::move(ticks)},
        {"warnings",
         std::move(warnings)}}.dump());
    return CHARKIT_OK;
  });
}

charkit_status charkit_bem_pack_arrays(const char* template_path, const char* scene_json,
                                       const void* const* arrays, const uint64_t* array_bytes,
                                       uint64_t array_count, const char* options_json,
                                       const char* output_path, char** out_json) {
  return guarded([&] {
    if (!template_path || !scene_json || !out_json)
      return bad_argument("template, scene_json or out_json is NULL");
    *out_json = nullptr;
    if (array_count && (!arrays || !array_bytes))
      return bad_argument("arrays or array_bytes is NULL while array_count is " +
                          std::to_string(array_count));
    Json opts = Json::object();
    if (options_json && *options_json) {
      auto parsed = core::parse_json_strict(options_json);
      if (!parsed) return fail(parsed.error());
      opts = std::move(*parsed);
      if (!opts.is_object()) return bad_argument("options_json is not a JSON object");
    }
    bem::PackOptions po;
    bool zip = false;
    std::optional<bem::PackSpec> spec;
    for (auto it = opts.begin(); it != opts.end(); ++it) {
      const std::string& key = it.key();
      const Json& v = it.value();
      if (key == "rawAxes" && v.is_boolean()) {
        po.raw_axes = v.get<bool>();
      } else if (key == "to" && v.is_string() && (v == "bem" || v == "zip")) {
        zip = v == "zip";
      } else if (key == "spec" && v.is_object()) {
        auto s = bem::parse_pack_spec(v);
        if (!s) return fail(s.error());
        spec = std::move(*s);
        po.spec = &*spec;
      } else if (key == "textureFormats" && v.is_object()) {
        for (auto f = v.begin(); f != v.end(); ++f) {
          auto format = f.value().is_string()
                            ? scene::texture_format_from_name(f.value().get<std::string>())
                            : std::nullopt;
          if (!format)
            return bad_argument("textureFormats/" + f.key() +
                                ": not one of BC7, BC1, BC3, BC4, BC5, ASTC4x4, ASTC5x5, "
                                "ASTC6x6, RGBA32, R8");
          po.texture_formats[f.key()] = *format;
        }
      } else {
        return bad_argument("options_json: unknown option or wrong type: '" + key +
                            "' (rawAxes, to, spec, textureFormats)");
      }
    }
    auto description = core::parse_json_strict(scene_json);
    if (!description) return fail(description.error());
    const ArrayTable table{arrays, array_bytes, array_count};
    auto built = scene_from_arrays(*description, table);
    if (!built) return fail(built.error());
    return pack_into_template(template_path, std::move(*built), po, zip, output_path, out_json);
  });
}
