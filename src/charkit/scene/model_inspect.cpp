// Model details (model_inspect.h): glTF through GltfDocument, FBX through
// Assimp in a child process.
#include "charkit/scene/model_inspect.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/scene/detail/fbx_import.h"
#include "charkit/scene/error_codes.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::scene {

using core::Json;

namespace {

const Json& array_at(const Json& obj, const char* key) {
  static const Json kEmpty = Json::array();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

struct Box {
  std::array<double, 3> lo{}, hi{};
  bool empty = true;
  void add(const std::array<double, 3>& a, const std::array<double, 3>& b) {
    for (std::size_t i = 0; i < 3; ++i) {
      lo[i] = empty ? a[i] : std::min(lo[i], a[i]);
      hi[i] = empty ? b[i] : std::max(hi[i], b[i]);
    }
    empty = false;
  }
  Json json() const {
    if (empty) return nullptr;
    return Json{{"min", {lo[0], lo[1], lo[2]}}, {"max", {hi[0], hi[1], hi[2]}}};
  }
};

std::uint64_t triangles_of(std::uint32_t mode, std::uint64_t n) {
  switch (mode) {
    case 4:
      return n / 3;
    case 5:
    case 6:
      return n >= 3 ? n - 2 : 0;
    default:
      return 0;
  }
}

const char* mode_name(std::uint32_t mode) {
  // glTF primitive modes, not error codes:
  static const char* kNames[] = {
      "POINTS",    "LINES",          "LINE_LOOP",   "LINE_STRIP",  // not-an-error-code
      "TRIANGLES", "TRIANGLE_STRIP", "TRIANGLE_FAN"};              // not-an-error-code
  return mode <= 6 ? kNames[mode] : "UNKNOWN";
}

Json index_or_null(const std::optional<std::size_t>& i) {
  return i ? Json(*i) : Json(nullptr);
}

// glTF details from the document's typed elements.
Json gltf_details(GltfDocument& doc) {
  const GltfAsset& a = doc.asset();
  Json out = Json::object();
  const auto node_name = [&](std::size_t n) {
    const std::string s = n < a.nodes.size() ? a.nodes[n].name : std::string();
    return s.empty() ? "#" + std::to_string(n) : s;
  };

  // Nodes, with their parents.
  Json jn = Json::array();
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const GltfNode& node = a.nodes[i];
    jn.push_back(Json{{"index", i},
                      {"name", node.name},
                      {"parent", index_or_null(node.parent)},
                      {"children", node.children},
                      {"mesh", index_or_null(node.mesh)},
                      {"skin", index_or_null(node.skin)}});
  }
  out["nodes"] = std::move(jn);

  // Meshes.
  Json jm = Json::array();
  for (std::size_t m = 0; m < a.meshes.size(); ++m) {
    const GltfMesh& mesh = a.meshes[m];
    Json prims = Json::array();
    std::uint64_t vertices = 0, triangles = 0;
    Box box;
    for (const GltfPrimitive& p : mesh.primitives) {
      Json attrs = Json::array();
      for (const GltfAttribute& attr : p.attributes.items) attrs.push_back(attr.semantic);
      const auto pos = p.attributes.find("POSITION");
      const std::uint64_t nv = pos ? a.accessors[*pos].count : 0;
      const std::uint64_t ni = p.indices ? a.accessors[*p.indices].count : nv;
      const std::uint64_t nt = triangles_of(p.mode, ni);
      vertices += nv;
      triangles += nt;
      // Bounds: the POSITION accessor's min / max (required by glTF 2.0),
      // else read from the data.
      if (pos) {
        const GltfAccessor& acc = a.accessors[*pos];
        if (acc.min.size() == 3 && acc.max.size() == 3) {
          box.add({acc.min[0], acc.min[1], acc.min[2]}, {acc.max[0], acc.max[1], acc.max[2]});
        } else {
          auto v = doc.read_accessor_doubles(*pos);
          if (v && v->size() >= 3 && v->size() % 3 == 0)
            for (std::size_t k = 0; k < v->size(); k += 3) {
              const std::array<double, 3> x{(*v)[k], (*v)[k + 1], (*v)[k + 2]};
              if (std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2])) box.add(x, x);
            }
        }
      }
      prims.push_back(Json{{"mode", mode_name(p.mode)},
                           {"vertices", nv},
                           {"triangles", nt},
                           {"indexed", p.indices.has_value()},
                           {"material", index_or_null(p.material)},
                           {"attributes", std::move(attrs)}});
    }
    Json names = Json::array();
    for (std::size_t t = 0; t < mesh.target_count(); ++t)
      names.push_back(t < mesh.target_names.size() ? mesh.target_names[t]
                                                   : "target_" + std::to_string(t));
    jm.push_back(Json{{"index", m},
                      {"name", mesh.name},
                      {"primitives", std::move(prims)},
                      {"vertices", vertices},
                      {"triangles", triangles},
                      {"morphTargets", std::move(names)},
                      {"bounds", box.json()}});
  }
  out["meshes"] = std::move(jm);

  // Skins.
  Json js = Json::array();
  for (std::size_t s = 0; s < a.skins.size(); ++s) {
    const GltfSkin& skin = a.skins[s];
    Json joints = Json::array();
    for (std::size_t j : skin.joints) joints.push_back(node_name(j));
    js.push_back(Json{{"index", s},
                      {"name", skin.name},
                      {"skeleton", skin.skeleton ? Json(node_name(*skin.skeleton)) : Json(nullptr)},
                      {"joints", std::move(joints)}});
  }
  out["skins"] = std::move(js);

  Json mats = Json::array();
  for (std::size_t i = 0; i < a.materials.size(); ++i)
    mats.push_back(Json{{"index", i}, {"name", a.materials[i].name}});
  out["materials"] = std::move(mats);

  Json tex = Json::array();
  for (std::size_t i = 0; i < a.textures.size(); ++i) {
    const GltfTexture& t = a.textures[i];
    Json mime = nullptr, image_name = nullptr;
    if (t.source) {
      const GltfImage& img = a.images[*t.source];
      image_name = img.name;
      if (!img.mime_type.empty()) mime = img.mime_type;
    }
    tex.push_back(Json{{"index", i},
                       {"name", t.name},
                       {"image", index_or_null(t.source)},
                       {"imageName", image_name},
                       {"mimeType", mime}});
  }
  out["textures"] = std::move(tex);

  // Animations: duration = the largest key time of any sampler input.
  Json anims = Json::array();
  for (std::size_t i = 0; i < a.animations.size(); ++i) {
    const GltfAnimation& anim = a.animations[i];
    double duration = 0;
    for (const GltfAnimationSampler& s : anim.samplers) {
      const GltfAccessor& acc = a.accessors[s.input];
      std::optional<double> mx;
      if (acc.max.size() == 1) mx = acc.max[0];
      if (!mx)
        if (auto v = doc.read_accessor_doubles(s.input); v && !v->empty()) {
          double m = -std::numeric_limits<double>::infinity();
          for (double t : *v)
            if (std::isfinite(t)) m = std::max(m, t);
          if (std::isfinite(m)) mx = m;
        }
      if (mx) duration = std::max(duration, *mx);
    }
    anims.push_back(Json{{"index", i},
                         {"name", anim.name},
                         {"duration", duration},
                         {"channels", anim.channels.size()},
                         {"samplers", anim.samplers.size()}});
  }
  out["animations"] = std::move(anims);

  // VRM humanoid: bone → node, in the file's order.
  Json humanoid = nullptr;
  if (a.vrm) {
    humanoid = Json::array();
    for (const VrmHumanBone& b : a.vrm->human_bones)
      humanoid.push_back(Json{{"bone", b.bone}, {"node", b.node}, {"nodeName", node_name(b.node)}});
  }
  out["humanoid"] = std::move(humanoid);
  return out;
}

// FBX through Assimp, in a child process (libassimp is not hardened against
// malformed files); the details come back as JSON text.
core::Result<Json> fbx_details(core::Bytes b, const IntakeOptions& o) {
  if (b.size() > o.max_fbx_bytes)
    return core::error_at_offset(codes::FBX_TOO_LARGE, "FBX over the size limit", 0);
  auto answer = detail::import_fbx_details(b);
  if (!answer) return std::move(answer).error();
  core::JsonLimits limits;
  limits.max_depth = 16;
  auto json = core::parse_json_strict(core::as_chars(*answer), limits);
  if (!json) return core::make_error(codes::FBX_IMPORT, "the FBX import process sent a bad answer");
  return std::move(*json);
}

std::string clean(const std::string& s) {
  std::string out;
  for (char c : s) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return out;
}

std::string quoted_name(const Json& j) {
  return j.is_string() && !j.get_ref<const std::string&>().empty()
             ? "\"" + clean(j.get<std::string>()) + "\""
             : "(unnamed)";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

core::Result<Json> model_details(core::Bytes bytes, InspectedModel& model,
                                 const IntakeOptions& options) {
  if (model.info.format == ModelFormat::kFbx) return fbx_details(bytes, options);
  if (!model.document)
    return core::make_error(
        codes::MODEL_DETAILS_ZIP,
        "details of a glTF in a zip are not read; unzip it and inspect the .gltf");
  return gltf_details(*model.document);
}

std::string model_details_text(const Json& d) {
  std::string s;
  const auto list = [&](const char* key) -> const Json& { return array_at(d, key); };
  // Node tree, roots first, children indented (each node printed once).
  const Json& nodes = list("nodes");
  s += "  node tree (" + std::to_string(nodes.size()) + " nodes):\n";
  std::vector<bool> seen(nodes.size(), false);
  std::function<void(std::size_t, int)> print = [&](std::size_t n, int depth) {
    if (n >= nodes.size() || seen[n] || depth > 64) return;
    seen[n] = true;
    const Json& node = nodes[n];
    s += "    " + std::string(static_cast<std::size_t>(depth) * 2, ' ') + std::to_string(n) + " " +
         quoted_name(node["name"]);
    if (!node["mesh"].is_null()) s += " mesh " + node["mesh"].dump();
    if (!node["skin"].is_null()) s += " skin " + node["skin"].dump();
    s += "\n";
    for (const Json& c : array_at(node, "children"))
      if (c.is_number_unsigned()) print(c.get<std::size_t>(), depth + 1);
  };
  for (std::size_t n = 0; n < nodes.size(); ++n)
    if (nodes[n]["parent"].is_null()) print(n, 0);
  for (std::size_t n = 0; n < nodes.size(); ++n) print(n, 0);  // what a cycle left out

  const Json& meshes = list("meshes");
  s += "  meshes (" + std::to_string(meshes.size()) + "):\n";
  for (const Json& m : meshes) {
    s += "    " + m["index"].dump() + " " + quoted_name(m["name"]) + ": " +
         std::to_string(array_at(m, "primitives").size()) + " primitives, " + m["vertices"].dump() +
         " vertices, " + m["triangles"].dump() + " triangles";
    if (m["bounds"].is_object()) {
      const Json& b = m["bounds"];
      s += ", bounds [" + number(b["min"][0].get<double>()) + " " +
           number(b["min"][1].get<double>()) + " " + number(b["min"][2].get<double>()) + "] .. [" +
           number(b["max"][0].get<double>()) + " " + number(b["max"][1].get<double>()) + " " +
           number(b["max"][2].get<double>()) + "]";
    }
    s += "\n";
    const Json& targets = array_at(m, "morphTargets");
    if (!targets.empty()) {
      s += "      morph targets (" + std::to_string(targets.size()) + "):";
      for (const Json& t : targets) s += " " + clean(t.get<std::string>());
      s += "\n";
    }
  }
  const Json& skins = list("skins");
  s += "  skins (" + std::to_string(skins.size()) + "):\n";
  for (const Json& sk : skins) {
    const Json& joints = array_at(sk, "joints");
    s += "    " + sk["index"].dump() + " " + quoted_name(sk["name"]) + ": " +
         std::to_string(joints.size()) + " joints:";
    for (const Json& j : joints) s += " " + clean(j.get<std::string>());
    s += "\n";
  }
  const Json& mats = list("materials");
  s += "  materials (" + std::to_string(mats.size()) + "):";
  for (const Json& m : mats) s += " " + m["index"].dump() + " " + quoted_name(m["name"]) + ";";
  s += "\n";
  const Json& tex = list("textures");
  s += "  textures (" + std::to_string(tex.size()) + "):";
  for (const Json& t : tex) {
    s += " " + t["index"].dump() + " " + quoted_name(t["name"]);
    if (!t["image"].is_null()) s += " image " + t["image"].dump();
    if (t["mimeType"].is_string()) s += " " + clean(t["mimeType"].get<std::string>());
    s += ";";
  }
  s += "\n";
  const Json& anims = list("animations");
  s += "  animations (" + std::to_string(anims.size()) + "):\n";
  for (const Json& a : anims)
    s += "    " + a["index"].dump() + " " + quoted_name(a["name"]) + ": " +
         number(a["duration"].get<double>()) + " s, " + a["channels"].dump() + " channels\n";
  if (d.contains("humanoid") && d["humanoid"].is_array()) {
    const Json& h = d["humanoid"];
    s += "  humanoid (" + std::to_string(h.size()) + " bones):\n";
    for (const Json& b : h)
      s += "    " + clean(b["bone"].get<std::string>()) + " -> " +
           (b["node"].is_null() ? std::string("(no node)")
                                : b["node"].dump() + " " + quoted_name(b["nodeName"])) +
           "\n";
  }
  return s;
}

}  // namespace charkit::scene
