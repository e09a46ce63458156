// Model details (model_inspect.h): glTF through GltfDocument, FBX through
// Assimp in a child process.
#include "charkit/scene/model_inspect.h"

#if CHARKIT_WITH_ASSIMP
#include <assimp/scene.h>
#endif

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

Json index_or_null(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end()) return nullptr;
  const auto v = core::json_uint32(*it);
  return v ? Json(*v) : Json(nullptr);
}

std::optional<std::array<double, 3>> vec3(const Json& j) {
  if (!j.is_array() || j.size() != 3) return std::nullopt;
  std::array<double, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    auto v = core::json_finite_number(j[i]);
    if (!v) return std::nullopt;
    out[i] = *v;
  }
  return out;
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

std::uint64_t triangles_of(std::int64_t mode, std::uint64_t n) {
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

const char* mode_name(std::int64_t mode) {
  // glTF primitive modes, not error codes:
  static const char* kNames[] = {
      "POINTS",    "LINES",          "LINE_LOOP",   "LINE_STRIP",  // not-an-error-code
      "TRIANGLES", "TRIANGLE_STRIP", "TRIANGLE_FAN"};              // not-an-error-code
  return mode >= 0 && mode <= 6 ? kNames[mode] : "UNKNOWN";
}

// glTF details; doc is null for a zip (declared min/max only).
Json gltf_details(const Json& root, GltfDocument* doc) {
  Json out = Json::object();
  const Json& nodes = array_at(root, "nodes");
  const Json& accessors = array_at(root, "accessors");
  const auto node_name = [&](std::size_t n) {
    const std::string s =
        n < nodes.size() ? core::json_string_or_empty(nodes[n], "name") : std::string();
    return s.empty() ? "#" + std::to_string(n) : s;
  };
  const auto accessor_count = [&](const Json& idx) -> std::optional<std::uint64_t> {
    const auto i = core::json_uint32(idx);
    if (!i || *i >= accessors.size() || !accessors[*i].is_object()) return std::nullopt;
    auto c = accessors[*i].find("count");
    if (c == accessors[*i].end()) return std::nullopt;
    auto v = core::json_uint32(*c);
    if (!v) return std::nullopt;
    return std::uint64_t{*v};
  };

  // Nodes, with parents from children.
  Json jn = Json::array();
  std::vector<Json> parents(nodes.size(), nullptr);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const Json& c : array_at(nodes[i], "children"))
      if (auto v = core::json_uint32(c); v && *v < nodes.size()) parents[*v] = i;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    Json children = Json::array();
    for (const Json& c : array_at(nodes[i], "children"))
      if (auto v = core::json_uint32(c)) children.push_back(*v);
    jn.push_back(Json{{"index", i},
                      {"name", core::json_string_or_empty(nodes[i], "name")},
                      {"parent", parents[i]},
                      {"children", std::move(children)},
                      {"mesh", index_or_null(nodes[i], "mesh")},
                      {"skin", index_or_null(nodes[i], "skin")}});
  }
  out["nodes"] = std::move(jn);

  // Meshes.
  Json jm = Json::array();
  const Json& meshes = array_at(root, "meshes");
  for (std::size_t m = 0; m < meshes.size(); ++m) {
    const Json& mesh = meshes[m];
    Json prims = Json::array();
    std::uint64_t vertices = 0, triangles = 0;
    std::size_t targets = 0;
    Box box;
    for (const Json& p : array_at(mesh, "primitives")) {
      if (!p.is_object()) continue;
      std::int64_t mode = 4;
      if (auto it = p.find("mode"); it != p.end())
        if (auto v = core::json_uint32(*it)) mode = *v;
      std::uint64_t nv = 0;
      Json attrs = Json::array();
      Json pos_index = nullptr;
      if (auto a = p.find("attributes"); a != p.end() && a->is_object()) {
        for (auto it = a->begin(); it != a->end(); ++it) attrs.push_back(it.key());
        if (auto pos = a->find("POSITION"); pos != a->end()) {
          nv = accessor_count(*pos).value_or(0);
          pos_index = *pos;
        }
      }
      std::uint64_t ni = nv;
      const bool indexed = p.contains("indices");
      if (indexed) ni = accessor_count(p["indices"]).value_or(0);
      const std::uint64_t nt = triangles_of(mode, ni);
      vertices += nv;
      triangles += nt;
      targets = std::max(targets, array_at(p, "targets").size());
      // Bounds: the POSITION accessor's min / max (required by glTF 2.0),
      // else read from the data.
      if (auto pi = core::json_uint32(pos_index); pi && *pi < accessors.size()) {
        const Json& acc = accessors[*pi];
        auto lo = acc.is_object() && acc.contains("min") ? vec3(acc["min"]) : std::nullopt;
        auto hi = acc.is_object() && acc.contains("max") ? vec3(acc["max"]) : std::nullopt;
        if (lo && hi) {
          box.add(*lo, *hi);
        } else if (doc) {
          auto v = doc->read_accessor_doubles(*pi);
          if (v && v->size() >= 3 && v->size() % 3 == 0)
            for (std::size_t k = 0; k < v->size(); k += 3) {
              const std::array<double, 3> x{(*v)[k], (*v)[k + 1], (*v)[k + 2]};
              if (std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2])) box.add(x, x);
            }
        }
      }
      prims.push_back(Json{{"mode", mode_name(mode)},
                           {"vertices", nv},
                           {"triangles", nt},
                           {"indexed", indexed},
                           {"material", index_or_null(p, "material")},
                           {"attributes", std::move(attrs)}});
    }
    Json names = Json::array();
    const Json* tn = nullptr;
    if (mesh.is_object())
      if (auto ex = mesh.find("extras"); ex != mesh.end() && ex->is_object())
        if (auto t = ex->find("targetNames"); t != ex->end() && t->is_array()) tn = &*t;
    for (std::size_t t = 0; t < targets; ++t)
      names.push_back(tn && t < tn->size() && (*tn)[t].is_string() ? (*tn)[t].get<std::string>()
                                                                   : "target_" + std::to_string(t));
    jm.push_back(Json{{"index", m},
                      {"name", core::json_string_or_empty(mesh, "name")},
                      {"primitives", std::move(prims)},
                      {"vertices", vertices},
                      {"triangles", triangles},
                      {"morphTargets", std::move(names)},
                      {"bounds", box.json()}});
  }
  out["meshes"] = std::move(jm);

  // Skins.
  Json js = Json::array();
  const Json& skins = array_at(root, "skins");
  for (std::size_t s = 0; s < skins.size(); ++s) {
    Json joints = Json::array();
    for (const Json& j : array_at(skins[s], "joints"))
      if (auto v = core::json_uint32(j)) joints.push_back(node_name(*v));
    Json skeleton = index_or_null(skins[s], "skeleton");
    js.push_back(
        Json{{"index", s},
             {"name", core::json_string_or_empty(skins[s], "name")},
             {"skeleton",
              skeleton.is_null() ? Json(nullptr) : Json(node_name(skeleton.get<std::size_t>()))},
             {"joints", std::move(joints)}});
  }
  out["skins"] = std::move(js);

  Json mats = Json::array();
  const Json& materials = array_at(root, "materials");
  for (std::size_t i = 0; i < materials.size(); ++i)
    mats.push_back(Json{{"index", i}, {"name", core::json_string_or_empty(materials[i], "name")}});
  out["materials"] = std::move(mats);

  Json tex = Json::array();
  const Json& textures = array_at(root, "textures");
  const Json& images = array_at(root, "images");
  for (std::size_t i = 0; i < textures.size(); ++i) {
    Json source = index_or_null(textures[i], "source");
    Json mime = nullptr, image_name = nullptr;
    if (!source.is_null() && source.get<std::size_t>() < images.size()) {
      const Json& img = images[source.get<std::size_t>()];
      image_name = core::json_string_or_empty(img, "name");
      if (img.is_object())
        if (auto mt = img.find("mimeType"); mt != img.end() && mt->is_string()) mime = *mt;
    }
    tex.push_back(Json{{"index", i},
                       {"name", core::json_string_or_empty(textures[i], "name")},
                       {"image", source},
                       {"imageName", image_name},
                       {"mimeType", mime}});
  }
  out["textures"] = std::move(tex);

  // Animations: duration = the largest key time of any sampler input.
  Json anims = Json::array();
  const Json& animations = array_at(root, "animations");
  for (std::size_t a = 0; a < animations.size(); ++a) {
    double duration = 0;
    for (const Json& s : array_at(animations[a], "samplers")) {
      const auto in =
          s.is_object() && s.contains("input") ? core::json_uint32(s["input"]) : std::nullopt;
      if (!in || *in >= accessors.size() || !accessors[*in].is_object()) continue;
      const Json& acc = accessors[*in];
      std::optional<double> mx;
      if (auto it = acc.find("max"); it != acc.end() && it->is_array() && it->size() == 1)
        mx = core::json_finite_number((*it)[0]);
      if (!mx && doc)
        if (auto v = doc->read_accessor_doubles(*in); v && !v->empty()) {
          double m = -std::numeric_limits<double>::infinity();
          for (double t : *v)
            if (std::isfinite(t)) m = std::max(m, t);
          if (std::isfinite(m)) mx = m;
        }
      if (mx) duration = std::max(duration, *mx);
    }
    anims.push_back(Json{{"index", a},
                         {"name", core::json_string_or_empty(animations[a], "name")},
                         {"duration", duration},
                         {"channels", array_at(animations[a], "channels").size()},
                         {"samplers", array_at(animations[a], "samplers").size()}});
  }
  out["animations"] = std::move(anims);

  // VRM humanoid: 0.x humanBones [{bone, node}], 1.0 humanBones {bone: {node}}.
  Json humanoid = nullptr;
  const auto bone_entry = [&](const std::string& bone, const Json& node) {
    const auto n = core::json_uint32(node);
    return Json{{"bone", bone},
                {"node", n ? Json(*n) : Json(nullptr)},
                {"nodeName", n ? Json(node_name(*n)) : Json(nullptr)}};
  };
  if (root.contains("extensions") && root["extensions"].is_object()) {
    const Json& ext = root["extensions"];
    if (auto v1 = ext.find("VRMC_vrm"); v1 != ext.end() && v1->is_object()) {
      humanoid = Json::array();
      if (auto h = v1->find("humanoid"); h != v1->end() && h->is_object())
        if (auto hb = h->find("humanBones"); hb != h->end() && hb->is_object())
          for (auto it = hb->begin(); it != hb->end(); ++it)
            humanoid.push_back(bone_entry(
                it.key(), it.value().is_object() ? it.value().value("node", Json()) : Json()));
    } else if (auto v0 = ext.find("VRM"); v0 != ext.end() && v0->is_object()) {
      humanoid = Json::array();
      if (auto h = v0->find("humanoid"); h != v0->end() && h->is_object())
        for (const Json& b : array_at(*h, "humanBones"))
          if (b.is_object() && b.contains("bone") && b["bone"].is_string())
            humanoid.push_back(bone_entry(b["bone"].get<std::string>(), b.value("node", Json())));
    }
  }
  out["humanoid"] = std::move(humanoid);
  return out;
}

// FBX through Assimp, in a child process (libassimp is not hardened against
// malformed files); the details come back as JSON text.
core::Result<Json> fbx_details(core::Bytes b, const IntakeOptions& o) {
  if (b.size() > o.max_fbx_bytes)
    return core::error_at_offset(codes::FBX_TOO_LARGE, "FBX over the size limit", 0);
  auto answer = detail::import_fbx_isolated(b, [](const aiScene& scene) {
#if CHARKIT_WITH_ASSIMP
    const aiScene* s = &scene;
    Json out = Json::object();
    Json nodes = Json::array();
    std::function<void(const aiNode*, Json, int)> walk = [&](const aiNode* n, Json parent,
                                                             int depth) {
      if (!n || depth > 1000 || nodes.size() > 1000000) return;
      const std::size_t me = nodes.size();
      nodes.push_back(Json{{"index", me},
                           {"name", n->mName.C_Str()},
                           {"parent", parent},
                           {"children", Json::array()},
                           {"mesh", n->mNumMeshes > 0 ? Json(n->mMeshes[0]) : Json(nullptr)},
                           {"skin", nullptr}});
      for (unsigned k = 0; k < n->mNumChildren; ++k) {
        nodes[me]["children"].push_back(nodes.size());
        walk(n->mChildren[k], me, depth + 1);
      }
    };
    walk(s->mRootNode, nullptr, 0);
    out["nodes"] = std::move(nodes);
    Json meshes = Json::array(), skins = Json::array();
    for (unsigned m = 0; m < s->mNumMeshes; ++m) {
      const aiMesh* mesh = s->mMeshes[m];
      std::uint64_t tris = 0;
      for (unsigned f = 0; f < mesh->mNumFaces; ++f)
        if (mesh->mFaces[f].mNumIndices >= 3) tris += mesh->mFaces[f].mNumIndices - 2;
      Box box;
      for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
        const std::array<double, 3> x{mesh->mVertices[v].x, mesh->mVertices[v].y,
                                      mesh->mVertices[v].z};
        box.add(x, x);
      }
      Json targets = Json::array();
      for (unsigned k = 0; k < mesh->mNumAnimMeshes; ++k)
        targets.push_back(mesh->mAnimMeshes[k]->mName.length > 0
                              ? std::string(mesh->mAnimMeshes[k]->mName.C_Str())
                              : "target_" + std::to_string(k));
      meshes.push_back(Json{{"index", m},
                            {"name", mesh->mName.C_Str()},
                            {"primitives", Json::array({Json{{"mode", "TRIANGLES"},
                                                             {"vertices", mesh->mNumVertices},
                                                             {"triangles", tris},
                                                             {"indexed", true},
                                                             {"material", mesh->mMaterialIndex},
                                                             {"attributes", Json::array()}}})},
                            {"vertices", mesh->mNumVertices},
                            {"triangles", tris},
                            {"morphTargets", std::move(targets)},
                            {"bounds", box.json()}});
      if (mesh->mNumBones > 0) {
        Json joints = Json::array();
        for (unsigned k = 0; k < mesh->mNumBones; ++k)
          joints.push_back(mesh->mBones[k]->mName.C_Str());
        skins.push_back(Json{{"index", skins.size()},
                             {"name", mesh->mName.C_Str()},
                             {"skeleton", nullptr},
                             {"joints", std::move(joints)}});
      }
    }
    out["meshes"] = std::move(meshes);
    out["skins"] = std::move(skins);
    Json mats = Json::array();
    for (unsigned m = 0; m < s->mNumMaterials; ++m) {
      aiString name;
      s->mMaterials[m]->Get(AI_MATKEY_NAME, name);
      mats.push_back(Json{{"index", m}, {"name", name.C_Str()}});
    }
    out["materials"] = std::move(mats);
    Json tex = Json::array();
    for (unsigned t = 0; t < s->mNumTextures; ++t)
      tex.push_back(Json{{"index", t},
                         {"name", s->mTextures[t]->mFilename.C_Str()},
                         {"image", nullptr},
                         {"imageName", nullptr},
                         {"mimeType", nullptr}});
    out["textures"] = std::move(tex);
    Json anims = Json::array();
    for (unsigned a = 0; a < s->mNumAnimations; ++a) {
      const aiAnimation* an = s->mAnimations[a];
      const double tps = an->mTicksPerSecond > 0 ? an->mTicksPerSecond : 25.0;
      anims.push_back(Json{{"index", a},
                           {"name", an->mName.C_Str()},
                           {"duration", std::isfinite(an->mDuration) ? an->mDuration / tps : 0.0},
                           {"channels", an->mNumChannels + an->mNumMorphMeshChannels},
                           {"samplers", nullptr}});
    }
    out["animations"] = std::move(anims);
    out["humanoid"] = nullptr;
    const std::string text = out.dump(-1, ' ', false, Json::error_handler_t::replace);
    return core::Result<std::vector<std::uint8_t>>(
        std::vector<std::uint8_t>(text.begin(), text.end()));
#else
        (void)scene;  // not called: the import answers FBX_IMPORT_DISABLED first
        return core::Result<std::vector<std::uint8_t>>(std::vector<std::uint8_t>{});
#endif
  });
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

core::Result<Json> model_details(core::Bytes bytes, const ModelInfo& info,
                                 const IntakeOptions& options) {
  if (info.format == ModelFormat::kFbx) return fbx_details(bytes, options);
  if (info.container == ModelContainer::kZip)
    return core::make_error(
        codes::MODEL_DETAILS_ZIP,
        "details of a glTF in a zip are not read; unzip it and inspect the .gltf");
  auto doc = GltfDocument::load(bytes);
  if (!doc) return std::move(doc).error();
  return gltf_details(doc->json(), &*doc);
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
