#include "charkit/bem/pack.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "charkit/bem/detail/vertex_format.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/packed_tbn.h"
#include "charkit/core/bytes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/scene/dds.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"

namespace charkit::bem {
namespace {

using core::Json;
using core::Location;
using core::make_error;

using namespace vertex_attr;  // kFormatBytes, the semantics (detail/vertex_format.h)

core::Error at(std::string code, std::string message, std::string pointer) {
  return make_error(std::move(code), std::move(message), Location::at_pointer(std::move(pointer)));
}

/// Little-endian store of an unsigned integer.
template <typename T>
void put(std::uint8_t* p, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

/// One component in Unity vertex format `format` (the inverse of the
/// export's read): normalised formats from [0,1] / [-1,1], rounded to
/// nearest and clamped; integer formats rounded and clamped to their range.
void write_component(std::uint8_t* p, std::uint32_t format, double v) {
  if (std::isnan(v)) v = 0;
  auto q = [&](double lo, double hi, double scale) {
    return std::nearbyint(std::clamp(v, lo, hi) * scale);
  };
  switch (format) {
    case 0:
      put<std::uint32_t>(p, std::bit_cast<std::uint32_t>(static_cast<float>(v)));
      break;
    case 1:
      put<std::uint16_t>(p, core::float_to_half(static_cast<float>(v)));
      break;
    case 2:
      p[0] = static_cast<std::uint8_t>(q(0, 1, 255));
      break;
    case 3:
      p[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q(-1, 1, 127)));
      break;
    case 4:
      put<std::uint16_t>(p, static_cast<std::uint16_t>(q(0, 1, 65535)));
      break;
    case 5:
      put<std::uint16_t>(p, static_cast<std::uint16_t>(static_cast<std::int16_t>(q(-1, 1, 32767))));
      break;
    case 6:
      p[0] = static_cast<std::uint8_t>(q(0, 255, 1));
      break;
    case 7:
      p[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q(-128, 127, 1)));
      break;
    case 8:
      put<std::uint16_t>(p, static_cast<std::uint16_t>(q(0, 65535, 1)));
      break;
    case 9:
      put<std::uint16_t>(
          p, static_cast<std::uint16_t>(static_cast<std::int16_t>(q(-32768, 32767, 1))));
      break;
    case 10:
      put<std::uint32_t>(p, static_cast<std::uint32_t>(q(0, 4294967295.0, 1)));
      break;
    default:
      put<std::uint32_t>(p, static_cast<std::uint32_t>(
                                static_cast<std::int32_t>(q(-2147483648.0, 2147483647.0, 1))));
      break;
  }
}

/// The vertices of one glTF mesh, its primitives concatenated (primitives
/// that share one `attributes` object share their vertices, as `bem export`
/// writes them).
/// The spec's package fields, options and rules replace the manifest's;
/// its material overrides go on the draws they name.
core::Status apply_spec_fields(const PackSpec& spec, Json& manifest) {
  for (const auto& [key, value] : spec.fields.items()) manifest[key] = value;
  for (const PackSpecDrawOverride& o : spec.material_overrides) {
    Json& meshes = manifest["meshes"];
    if (!meshes.is_array() || o.mesh >= meshes.size() || !meshes[o.mesh].is_object() ||
        !meshes[o.mesh].contains("draws") || !meshes[o.mesh]["draws"].is_array() ||
        o.draw >= meshes[o.mesh]["draws"].size() || !meshes[o.mesh]["draws"][o.draw].is_object())
      return at("BEM_PACK_SPEC",
                "the package has no draw " + std::to_string(o.draw) + " in mesh " +
                    std::to_string(o.mesh),
                o.pointer);
    meshes[o.mesh]["draws"][o.draw]["material_overrides"] = o.overrides;
  }
  return core::Ok{};
}

struct SceneMesh {
  std::uint32_t gltf_mesh = 0;
  std::optional<std::uint32_t> node;
  std::string node_name;
  std::size_t vertex_count = 0;
  std::vector<float> positions;         // 3 per vertex
  std::vector<float> normals;           // 3 per vertex, or empty
  std::vector<float> tangents;          // 4 per vertex, or empty
  std::vector<float> colors;            // 4 per vertex, or empty
  std::vector<std::vector<float>> uvs;  // TEXCOORD_n: 2 per vertex
  std::map<std::string, std::pair<std::uint32_t, std::vector<float>>> custom;  // _NAME
  std::vector<std::uint32_t> joints;  // 4 per vertex (index into joint_names), or empty
  std::vector<float> weights;         // 4 per vertex, or empty
  std::vector<std::string> joint_names;
  /// Morph targets: POSITION displacements (3 per vertex, zeros where a
  /// target has none), their names and the mesh's default weights.
  std::vector<std::vector<float>> targets;
  std::vector<std::string> target_names;
  std::vector<float> target_weights;
  struct Primitive {
    std::string material;
    std::vector<std::uint32_t> indices;  // into the concatenated vertices
    std::string pointer;                 // /meshes/i/primitives/p
  };
  std::vector<Primitive> primitives;
};

class ScenePacker {
 public:
  ScenePacker(const PackageContent& tmpl, const Model& model, scene::GltfDocument& doc,
              const PackOptions& options)
      : model_(model), doc_(doc), options_(options), template_manifest_(tmpl.manifest) {
    result_.content = tmpl;
    result_.content.manifest_text.clear();  // the manifest changes
  }

  core::Result<PackResult> run() {
    if (auto st = check_texture_format_names(); !st) return std::move(st).error();
    auto matched = match_meshes();
    if (!matched) return std::move(matched).error();
    if (matched->empty()) {
      // The components a glTF node may name: those a template mesh replaces.
      std::string names;
      for (const Component& c : model_.components)
        if (std::any_of(c.candidates.begin(), c.candidates.end(),
                        [](const Candidate& cand) { return cand.op == Operation::kReplace; }))
          names += (names.empty() ? "" : ", ") + c.mesh_name;
      if (names.empty()) names = "the template replaces none";
      return at("BEM_PACK_NO_MESH",
                "no glTF mesh matches a mesh of the template: name the glTF mesh mesh_N (N: the "
                "template's mesh index, as bem export does) or its node after a replaced "
                "component (" +
                    names + ")",
                "/meshes");
    }
    for (const auto& [m, g] : *matched) {
      auto st = pack_mesh(m, g);
      if (!st) return std::move(st).error();
    }
    if (auto st = pack_textures(); !st) return std::move(st).error();
    if (auto st = build_sliders(); !st) return std::move(st).error();
    if (auto st = prune_placeholders(); !st) return std::move(st).error();
    if (auto st = apply_spec(); !st) return std::move(st).error();
    drop_replaced_payloads();
    if (auto st = declare_used_capabilities(result_.content); !st) return std::move(st).error();
    return std::move(result_);
  }

 private:
  void warn(std::string code, std::string message, std::string pointer) {
    result_.warnings.push_back({std::move(code), std::move(message), std::move(pointer)});
  }

  const Json& json() const { return doc_.json(); }

  /// The glTF images named after template textures (bem export names each
  /// image after its texture's original_name, or texture_N) replace them:
  /// kept when equal to the export's image of the texture, else encoded in
  /// the texture's format. Other images are not packed (warning).
  core::Status pack_textures() {
    std::map<std::string, std::uint32_t> texture_of_name;
    for (std::uint32_t t = 0; t < model_.textures.size(); ++t) {
      const std::string& n = model_.textures[t].original_name;
      texture_of_name.emplace(n.empty() ? "texture_" + std::to_string(t) : n, t);
      texture_of_name.emplace("texture_" + std::to_string(t), t);
    }
    std::set<std::uint32_t> done;
    const std::size_t images = doc_.count("images");
    for (std::size_t i = 0; i < images; ++i) {
      const std::string ptr = "/images/" + std::to_string(i);
      const Json& im = json()["images"][i];
      // The texture it replaces: extras.original_name (a name a tool could
      // not keep as the image's own), else the image's name.
      std::string name;
      if (im.is_object() && im.contains("extras") && im["extras"].is_object() &&
          im["extras"].contains("original_name") && im["extras"]["original_name"].is_string())
        name = im["extras"]["original_name"].get<std::string>();
      else if (im.is_object() && im.contains("name") && im["name"].is_string())
        name = im["name"].get<std::string>();
      auto found = texture_of_name.find(name);
      if (found == texture_of_name.end()) {
        warn("BEM_PACK_TEXTURES_KEPT",
             "image " + std::to_string(i) + (name.empty() ? "" : " (\"" + name + "\")") +
                 " is named after no template texture and is not packed",
             ptr);
        continue;
      }
      const std::uint32_t t = found->second;
      if (!done.insert(t).second) {
        warn("BEM_PACK_TEXTURES_KEPT",
             "image " + std::to_string(i) + " names texture " + std::to_string(t) +
                 " again; the first image with that name is packed",
             ptr);
        continue;
      }
      auto bytes = image_bytes(im, ptr);
      if (!bytes) return std::move(bytes).error();
      if (bytes->empty()) {
        warn("BEM_PACK_TEXTURES_KEPT",
             "image " + std::to_string(i) + " is not stored in the file (a URI): texture " +
                 std::to_string(t) + " is kept",
             ptr);
        continue;
      }
      auto st = pack_texture(t, static_cast<std::uint32_t>(i), *bytes, ptr);
      if (!st) return st;
    }
    return core::Ok{};
  }

  /// The bytes of an image stored in a buffer view (empty for a URI image).
  core::Result<std::vector<std::uint8_t>> image_bytes(const Json& im, const std::string& ptr) {
    if (!im.is_object() || !im.contains("bufferView")) return std::vector<std::uint8_t>{};
    auto view = core::json_uint32(im["bufferView"]);
    if (!view || *view >= doc_.count("bufferViews"))
      return at("BEM_PACK_TEXTURE", "the image's bufferView does not exist", ptr + "/bufferView");
    auto bytes = doc_.buffer_view(*view);
    if (!bytes) return std::move(bytes).error();
    return std::vector<std::uint8_t>(bytes->begin(), bytes->end());
  }

  /// Which channels carry data: R (grey formats), RG (two-channel normal
  /// maps: bem export rebuilds blue), else RGBA.
  static std::size_t data_channels(const Texture& tex, std::uint32_t format) {
    if (format == scene::texture_format::kR8 || format == scene::texture_format::kBC4) return 1;
    if (tex.semantic == "normal" &&
        (tex.normal_encoding == "xy-unorm" || format == scene::texture_format::kBC5))
      return 2;
    return 4;
  }

  /// Every name given a texture format is a texture of the template or a
  /// kind (edited_format): one that is neither would be ignored.
  core::Status check_texture_format_names() const {
    for (const auto& [name, format] : options_.texture_formats) {
      if (name == "normal" || name == "color" || name == "linear") continue;
      std::string names;
      for (const Texture& t : model_.textures) {
        if (t.original_name == name) {
          names.clear();
          break;
        }
        names += (names.empty() ? "" : ", ") + ("\"" + t.original_name + "\"");
      }
      if (!names.empty() || model_.textures.empty())
        return at("BEM_PACK_TEXTURE_FORMAT",
                  "a texture format for \"" + name +
                      "\", which is neither a texture of the template (" +
                      (names.empty() ? std::string("none") : names) +
                      ") nor a kind (normal, color, linear)",
                  "/textures");
    }
    return core::Ok{};
  }

  /// The format an edited texture is encoded in: --texture-format by name,
  /// else by kind (normal, color = sRGB, linear), else the template's.
  std::uint32_t edited_format(const Texture& tex) const {
    const auto& formats = options_.texture_formats;
    if (auto it = formats.find(tex.original_name); it != formats.end()) return it->second;
    const char* kind = tex.semantic == "normal" ? "normal" : tex.srgb ? "color" : "linear";
    if (auto it = formats.find(kind); it != formats.end()) return it->second;
    return tex.format;
  }

  /// A DDS image is the texture's payload as it is (its format, size, mip
  /// chain and, from a DX10 header, colour space; BGRA swizzled to RGBA):
  /// what the creator's tool wrote reaches the game unchanged.
  core::Status pack_dds(std::uint32_t t, std::uint32_t i, const std::vector<std::uint8_t>& file,
                        const std::string& ptr) {
    const Texture& tex = model_.textures[t];
    auto dds = scene::parse_dds(file);
    if (!dds)
      return at("BEM_PACK_TEXTURE",
                "texture " + std::to_string(t) + " (\"" + tex.original_name +
                    "\"): " + dds.error().message,
                ptr);
    const bool srgb = dds->srgb.value_or(tex.srgb);
    if (srgb != tex.srgb)
      warn("BEM_PACK_TEXTURE_SRGB",
           "the DDS image of texture " + std::to_string(t) + " (\"" + tex.original_name +
               "\") is " + (srgb ? "sRGB" : "linear") + " by its DXGI format; the template's is " +
               (tex.srgb ? "sRGB" : "linear") + ": the DDS's is kept",
           ptr);
    Json& tj = result_.content.manifest["textures"][t];
    tj["width"] = dds->width;
    tj["height"] = dds->height;
    tj["mips"] = dds->mips;
    tj["format"] = dds->format;
    tj["srgb"] = srgb;
    tj["payload"] = add_payload(std::move(dds->data));
    PackedTexture out{t,           i,          tex.original_name,
                      dds->format, dds->width, dds->height,
                      dds->mips,   true,       std::numeric_limits<double>::infinity()};
    out.dds = true;
    result_.textures.push_back(out);
    return core::Ok{};
  }

  core::Status pack_texture(std::uint32_t t, std::uint32_t i, const std::vector<std::uint8_t>& png,
                            const std::string& ptr) {
    const Texture& tex = model_.textures[t];
    if (scene::is_dds(png)) return pack_dds(t, i, png, ptr);
    auto image = scene::decode_image(png);
    if (!image) return at("BEM_PACK_TEXTURE", image.error().message, ptr);
    // Unity stores the bottom row first (bem export flips to glTF's order).
    if (!options_.raw_axes) scene::flip_rows(*image);
    const std::size_t channels = data_channels(tex, tex.format);
    PackedTexture out{
        t, i, tex.original_name, tex.format, image->width, image->height, tex.mips, false, 0.0};
    // Unchanged: the template's top mip decodes to the same data channels.
    if (tex.payload < result_.content.payloads.size() && image->width == tex.width &&
        image->height == tex.height) {
      auto original = scene::decode_top_mip(tex.format, tex.width, tex.height, tex.srgb,
                                            result_.content.payloads[tex.payload]);
      bool same = static_cast<bool>(original);
      for (std::size_t p = 0; same && p < image->pixels.size(); p += 4)
        for (std::size_t c = 0; c < channels; ++c)
          same = same && image->pixels[p + c] == original->pixels[p + c];
      if (same) {
        result_.textures.push_back(out);
        return core::Ok{};
      }
    }
    // Changed: encode, with as many mips as the new size allows up to the
    // template's count.
    std::uint32_t full = 1;
    for (std::uint32_t w = image->width, h = image->height; w > 1 || h > 1; ++full) {
      w = std::max<std::uint32_t>(1, w / 2);
      h = std::max<std::uint32_t>(1, h / 2);
    }
    const std::uint32_t mips = std::min(std::max<std::uint32_t>(tex.mips, 1), full);
    const std::uint32_t format = edited_format(tex);
    if (format == scene::texture_format::kR8 && tex.srgb)
      return at("BEM_PACK_TEXTURE",
                "texture " + std::to_string(t) + " (\"" + tex.original_name +
                    "\") is sRGB, and R8 cannot be (BEM §8): choose another format for it",
                ptr);
    auto chain = scene::encode_texture(format, *image, mips, tex.srgb);
    if (!chain)
      return at("BEM_PACK_TEXTURE",
                "texture " + std::to_string(t) + " (\"" + tex.original_name + "\", " +
                    scene::texture_format_name(format) + "): " + chain.error().message,
                ptr);
    auto back = scene::decode_top_mip(format, image->width, image->height, tex.srgb, *chain);
    if (back) {
      const std::size_t encoded_channels = data_channels(tex, format);
      double sum = 0;
      std::size_t n = 0;
      for (std::size_t p = 0; p < image->pixels.size(); p += 4)
        for (std::size_t c = 0; c < encoded_channels; ++c, ++n) {
          const double d = double(image->pixels[p + c]) - double(back->pixels[p + c]);
          sum += d * d;
        }
      out.psnr_db = sum == 0 ? std::numeric_limits<double>::infinity()
                             : 10.0 * std::log10(255.0 * 255.0 * double(n) / sum);
    }
    Json& tj = result_.content.manifest["textures"][t];
    tj["width"] = image->width;
    tj["height"] = image->height;
    tj["mips"] = mips;
    tj["payload"] = add_payload(std::move(*chain));
    if (format != tex.format) {
      tj["format"] = format;
      // A two-channel normal map says so (§8: Android's installer needs it).
      if (tex.semantic == "normal" && format == scene::texture_format::kBC5)
        tj["normal_encoding"] = "xy-unorm";
      else if (tex.semantic == "normal" && tex.normal_encoding == "xy-unorm" &&
               format != scene::texture_format::kBC5)
        tj["normal_encoding"] = "xyz-unorm";
    }
    out.format = format;
    out.mips = mips;
    out.encoded = true;
    result_.textures.push_back(out);
    return core::Ok{};
  }

  /// Template mesh index -> (glTF mesh, node placing it).
  core::Result<std::map<std::uint32_t, std::pair<std::uint32_t, std::optional<std::uint32_t>>>>
  match_meshes() {
    std::map<std::string, std::set<std::uint32_t>> meshes_of_component;
    for (const Component& c : model_.components)
      for (const Candidate& cand : c.candidates)
        if (cand.op == Operation::kReplace) meshes_of_component[c.mesh_name].insert(cand.mesh);
    // The node that places each glTF mesh (the first one).
    std::map<std::uint32_t, std::uint32_t> node_of_mesh;
    std::set<std::uint32_t> moved_nodes;  // nodes with a transform
    const std::size_t nodes = doc_.count("nodes");
    for (std::size_t n = 0; n < nodes; ++n) {
      const Json& node = json()["nodes"][n];
      if (!node.is_object()) continue;
      auto it = node.find("mesh");
      if (it == node.end()) continue;
      auto mesh = core::json_uint32(*it);
      if (!mesh || *mesh >= doc_.count("meshes"))
        return at("BEM_PACK_MESH", "node mesh is not a mesh index", "/nodes/" + std::to_string(n));
      node_of_mesh.try_emplace(*mesh, static_cast<std::uint32_t>(n));
      if (has_transform(node)) moved_nodes.insert(static_cast<std::uint32_t>(n));
    }
    std::map<std::uint32_t, std::pair<std::uint32_t, std::optional<std::uint32_t>>> out;
    const std::size_t meshes = doc_.count("meshes");
    for (std::size_t g = 0; g < meshes; ++g) {
      const Json& mj = json()["meshes"][g];
      const std::string where = "/meshes/" + std::to_string(g);
      std::optional<std::uint32_t> node;
      if (auto it = node_of_mesh.find(static_cast<std::uint32_t>(g)); it != node_of_mesh.end())
        node = it->second;
      std::optional<std::uint32_t> target;
      if (mj.is_object() && mj.contains("name") && mj["name"].is_string()) {
        const std::string name = mj["name"].get<std::string>();
        if (name.rfind("mesh_", 0) == 0 && name.size() > 5 && name.size() < 16 &&
            std::all_of(name.begin() + 5, name.end(),
                        [](char c) { return c >= '0' && c <= '9'; })) {
          const unsigned long long m = std::stoull(name.substr(5));
          if (m >= model_.meshes.size())
            return at("BEM_PACK_MESH",
                      "glTF mesh \"" + name + "\" names template mesh " + std::to_string(m) +
                          ", but the template has " + std::to_string(model_.meshes.size()),
                      where + "/name");
          target = static_cast<std::uint32_t>(m);
        }
      }
      if (!target && node) {
        const Json& nj = json()["nodes"][*node];
        // The component: the node's extras.bem_component, else its name
        // (a component's mesh_name, or BEM_C<n> for component n).
        const Json* component = nullptr;
        if (nj.contains("extras") && nj["extras"].is_object() &&
            nj["extras"].contains("bem_component") && nj["extras"]["bem_component"].is_string())
          component = &nj["extras"]["bem_component"];
        else if (nj.contains("name") && nj["name"].is_string())
          component = &nj["name"];
        if (component != nullptr) {
          std::string key = component->get<std::string>();
          // BEM_C<n>: component n, as the public BEM project's Blender exporter names objects.
          constexpr std::string_view kPrefix = "BEM_C";  // not-an-error-code: a node name
          if (key.size() > 5 && key.size() < 12 && key.starts_with(kPrefix) &&
              std::all_of(key.begin() + 5, key.end(),
                          [](char c) { return c >= '0' && c <= '9'; })) {
            const unsigned long long n = std::stoull(key.substr(5));
            if (n < model_.components.size()) key = model_.components[n].mesh_name;
          }
          auto it = meshes_of_component.find(key);
          if (it != meshes_of_component.end()) {
            if (it->second.size() > 1)
              return at("BEM_PACK_MESH",
                        "node \"" + it->first + "\" names a component that " +
                            std::to_string(it->second.size()) +
                            " template meshes replace: name the glTF mesh mesh_N to say which",
                        "/nodes/" + std::to_string(*node) + "/name");
            target = *it->second.begin();
          } else if (std::any_of(model_.components.begin(), model_.components.end(),
                                 [&](const Component& c) { return c.mesh_name == key; })) {
            // A component the template keeps or hides: no mesh of the
            // template gives its vertex layout, which is never guessed.
            return at("BEM_PACK_MESH",
                      "node \"" + component->get<std::string>() + "\" names component \"" + key +
                          "\", which no mesh of the template replaces, so its vertex layout "
                          "is unknown: pack it with a JSON template that gives the layout "
                          "(docs/bem/pack.md), or into a package that replaces it",
                      "/nodes/" + std::to_string(*node));
          }
        }
      }
      if (!target) {
        warn("BEM_PACK_MESH_UNUSED",
             "glTF mesh " + std::to_string(g) +
                 " matches no template mesh (by its name mesh_N or its "
                 "node's component name); not packed",
             where);
        continue;
      }
      if (out.contains(*target))
        return at("BEM_PACK_MESH",
                  "glTF meshes " + std::to_string(out[*target].first) + " and " +
                      std::to_string(g) + " both replace template mesh " + std::to_string(*target),
                  where);
      out[*target] = {static_cast<std::uint32_t>(g), node};
    }
    // Only the nodes of packed meshes: a transform elsewhere changes nothing.
    for (const auto& [m, placed] : out)
      if (placed.second && moved_nodes.contains(*placed.second))
        warn("BEM_PACK_NODE_TRANSFORM",
             "node " + std::to_string(*placed.second) +
                 " has a transform, which is not applied: the vertices are packed as the mesh "
                 "stores them (apply the transform in Blender before exporting)",
             "/nodes/" + std::to_string(*placed.second));
    return out;
  }

  static bool has_transform(const Json& node) {
    auto differs = [&](const char* key, std::initializer_list<double> identity) {
      auto it = node.find(key);
      if (it == node.end() || !it->is_array() || it->size() != identity.size()) return false;
      std::size_t k = 0;
      for (double v : identity) {
        const Json& x = (*it)[k++];
        if (!x.is_number() || std::fabs(x.get<double>() - v) > 1e-6) return true;
      }
      return false;
    };
    return differs("translation", {0, 0, 0}) || differs("rotation", {0, 0, 0, 1}) ||
           differs("scale", {1, 1, 1}) ||
           differs("matrix", {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  }

  /// Reads the float values of an accessor with `components` per element
  /// and `count` elements.
  core::Result<std::vector<float>> read_floats(const Json& index, std::size_t components,
                                               std::size_t count, const std::string& where) {
    auto a = core::json_uint32(index);
    if (!a) return at("BEM_PACK_ATTRIBUTE", "expected an accessor index", where);
    auto info = doc_.accessor(*a);
    if (!info) return std::move(info).error();
    if (info->components != components || info->count != count)
      return at("BEM_PACK_ATTRIBUTE",
                "expected " + std::to_string(count) + " elements of " + std::to_string(components) +
                    " components, the accessor has " + std::to_string(info->count) + " of " +
                    std::to_string(info->components),
                where);
    auto values = doc_.read_accessor_floats(*a);
    if (!values) return std::move(values).error();
    for (float v : *values)
      if (!std::isfinite(v)) return at("BEM_PACK_ATTRIBUTE", "a value is not finite", where);
    return values;
  }

  core::Result<SceneMesh> read_scene_mesh(std::uint32_t g, std::optional<std::uint32_t> node) {
    SceneMesh out;
    out.gltf_mesh = g;
    out.node = node;
    const std::string mptr = "/meshes/" + std::to_string(g);
    const Json& mj = json()["meshes"][g];
    if (node) {
      const Json& nj = json()["nodes"][*node];
      if (nj.contains("name") && nj["name"].is_string())
        out.node_name = nj["name"].get<std::string>();
    }
    if (!mj.is_object() || !mj.contains("primitives") || !mj["primitives"].is_array() ||
        mj["primitives"].empty())
      return at("BEM_PACK_PRIMITIVE", "the mesh has no primitives", mptr);
    const Json& prims = mj["primitives"];
    struct Group {
      Json attributes;
      Json targets;
      std::size_t first = 0;
      std::size_t count = 0;
    };
    std::vector<Group> groups;         // vertices by attributes object
    std::set<std::string> names_seen;  // attribute names of the first group
    for (std::size_t p = 0; p < prims.size(); ++p) {
      const std::string pptr = mptr + "/primitives/" + std::to_string(p);
      const Json& pj = prims[p];
      if (!pj.is_object() || !pj.contains("attributes") || !pj["attributes"].is_object())
        return at("BEM_PACK_PRIMITIVE", "a primitive needs an attributes object", pptr);
      if (pj.contains("mode") && pj["mode"] != 4)
        return at("BEM_PACK_PRIMITIVE", "only triangle primitives (mode 4) can be packed",
                  pptr + "/mode");
      const Json targets = pj.contains("targets") ? pj["targets"] : Json::array();
      if (!targets.is_array())
        return at("BEM_PACK_PRIMITIVE", "targets must be an array", pptr + "/targets");
      if (p == 0) {
        out.targets.assign(targets.size(), {});
      } else if (targets.size() != out.targets.size()) {
        return at("BEM_PACK_PRIMITIVE",
                  "the primitive has " + std::to_string(targets.size()) +
                      " morph targets, the mesh's first primitive " +
                      std::to_string(out.targets.size()) + " (glTF: every primitive the same)",
                  pptr + "/targets");
      }
      const Json& attrs = pj["attributes"];
      std::size_t first = 0;
      std::size_t group_vertices = 0;
      auto found = std::find_if(groups.begin(), groups.end(), [&](const Group& gr) {
        return gr.attributes == attrs && gr.targets == targets;
      });
      if (found != groups.end()) {
        first = found->first;
        group_vertices = found->count;
      } else {
        std::set<std::string> names;
        for (auto it = attrs.begin(); it != attrs.end(); ++it) names.insert(it.key());
        if (groups.empty()) {
          names_seen = names;
        } else if (names != names_seen) {
          return at("BEM_PACK_ATTRIBUTE",
                    "the primitive has other attributes than the mesh's first primitive; every "
                    "primitive of a mesh needs the same ones",
                    pptr + "/attributes");
        }
        first = out.vertex_count;
        auto st = append_vertices(out, attrs, pptr + "/attributes");
        if (!st) return std::move(st).error();
        group_vertices = out.vertex_count - first;
        for (std::size_t k = 0; k < targets.size(); ++k) {
          const std::string tptr = pptr + "/targets/" + std::to_string(k);
          std::vector<float>& dst = out.targets[k];
          if (!targets[k].is_object())
            return at("BEM_PACK_PRIMITIVE", "a morph target must be an object", tptr);
          if (targets[k].contains("POSITION")) {
            auto v = read_floats(targets[k]["POSITION"], 3, group_vertices, tptr + "/POSITION");
            if (!v) return std::move(v).error();
            dst.insert(dst.end(), v->begin(), v->end());
          } else {
            dst.resize(dst.size() + 3 * group_vertices, 0.0F);
          }
        }
        groups.push_back({attrs, targets, first, group_vertices});
      }
      SceneMesh::Primitive prim;
      prim.pointer = pptr;
      if (pj.contains("material")) {
        auto mat = core::json_uint32(pj["material"]);
        if (!mat || *mat >= doc_.count("materials"))
          return at("BEM_PACK_PRIMITIVE", "material is not a material index", pptr + "/material");
        const Json& mat_json = json()["materials"][*mat];
        if (mat_json.is_object() && mat_json.contains("name") && mat_json["name"].is_string())
          prim.material = mat_json["name"].get<std::string>();
      }
      if (pj.contains("indices")) {
        auto a = core::json_uint32(pj["indices"]);
        if (!a) return at("BEM_PACK_PRIMITIVE", "expected an accessor index", pptr + "/indices");
        auto idx = doc_.read_accessor_uints(*a);
        if (!idx) return std::move(idx).error();
        prim.indices = std::move(*idx);
      } else {
        prim.indices.resize(group_vertices);
        for (std::size_t i = 0; i < group_vertices; ++i)
          prim.indices[i] = static_cast<std::uint32_t>(i);
      }
      if (prim.indices.empty() || prim.indices.size() % 3 != 0)
        return at("BEM_PACK_PRIMITIVE",
                  "the primitive has " + std::to_string(prim.indices.size()) +
                      " indices; triangles need a positive multiple of 3",
                  pptr + "/indices");
      for (std::uint32_t& i : prim.indices) {
        if (i >= group_vertices)
          return at("BEM_PACK_PRIMITIVE",
                    "index " + std::to_string(i) + " is not below the vertex count " +
                        std::to_string(group_vertices),
                    pptr + "/indices");
        i += static_cast<std::uint32_t>(first);
      }
      out.primitives.push_back(std::move(prim));
    }
    if (!out.joints.empty()) {
      auto st = read_joint_names(out, mptr);
      if (!st) return std::move(st).error();
    }
    read_target_names(out, mj, mptr);
    return out;
  }

  /// Slider names from mesh.extras.targetNames (what Blender writes: the
  /// shape key names), default weights from mesh.weights.
  void read_target_names(SceneMesh& out, const Json& mj, const std::string& mptr) {
    const std::size_t n = out.targets.size();
    if (n == 0) return;
    const Json* names = nullptr;
    if (mj.contains("extras") && mj["extras"].is_object() && mj["extras"].contains("targetNames"))
      names = &mj["extras"]["targetNames"];
    bool named = names != nullptr && names->is_array() && names->size() == n;
    for (std::size_t k = 0; named && k < n; ++k)
      named = (*names)[k].is_string() && !(*names)[k].get<std::string>().empty();
    for (std::size_t k = 0; k < n; ++k)
      out.target_names.push_back(named ? (*names)[k].get<std::string>()
                                       : "target_" + std::to_string(k));
    if (!named)
      warn("BEM_PACK_MORPH_NAMES",
           "the mesh's morph targets have no names (mesh.extras.targetNames, one string each): "
           "the sliders are named target_0 ... target_" +
               std::to_string(n - 1),
           mptr);
    out.target_weights.assign(n, 0.0F);
    if (mj.contains("weights") && mj["weights"].is_array() && mj["weights"].size() == n)
      for (std::size_t k = 0; k < n; ++k)
        if (mj["weights"][k].is_number())
          out.target_weights[k] = std::clamp(mj["weights"][k].get<float>(), 0.0F, 1.0F);
  }

  core::Status append_vertices(SceneMesh& out, const Json& attrs, const std::string& where) {
    if (!attrs.contains("POSITION"))
      return at("BEM_PACK_ATTRIBUTE", "the primitive has no POSITION", where);
    auto pa = core::json_uint32(attrs["POSITION"]);
    if (!pa) return at("BEM_PACK_ATTRIBUTE", "expected an accessor index", where + "/POSITION");
    auto pinfo = doc_.accessor(*pa);
    if (!pinfo) return std::move(pinfo).error();
    const std::size_t n = pinfo->count;
    if (out.vertex_count + n > options_.max_vertices || out.vertex_count + n > (1u << 20))
      return at("BEM_PACK_LIMIT",
                "the mesh has more than " +
                    std::to_string(std::min<std::uint64_t>(options_.max_vertices, 1u << 20)) +
                    " vertices (BEM §11 allows 1,048,576 per mesh)",
                where + "/POSITION");
    auto append = [&](const char* name, std::size_t comps, std::vector<float>& dst,
                      bool required) -> core::Status {
      if (!attrs.contains(name)) {
        if (required) return at("BEM_PACK_ATTRIBUTE", std::string("missing ") + name, where);
        return core::Ok{};
      }
      auto v = read_floats(attrs[name], comps, n, where + "/" + name);
      if (!v) return std::move(v).error();
      dst.insert(dst.end(), v->begin(), v->end());
      return core::Ok{};
    };
    if (auto st = append("POSITION", 3, out.positions, true); !st) return st;
    if (auto st = append("NORMAL", 3, out.normals, false); !st) return st;
    if (auto st = append("TANGENT", 4, out.tangents, false); !st) return st;
    if (attrs.contains("COLOR_0")) {
      auto a = core::json_uint32(attrs["COLOR_0"]);
      auto info = a ? doc_.accessor(*a)
                    : core::Result<scene::GltfAccessorInfo>(at(
                          "BEM_PACK_ATTRIBUTE", "expected an accessor index", where + "/COLOR_0"));
      if (!info) return std::move(info).error();
      const std::size_t comps = info->components == 3 ? 3 : 4;
      auto v = read_floats(attrs["COLOR_0"], comps, n, where + "/COLOR_0");
      if (!v) return std::move(v).error();
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < 4; ++c)
          out.colors.push_back(c < comps ? (*v)[i * comps + c] : 1.0F);
    }
    for (std::size_t t = 0; t < 8; ++t) {
      const std::string name = "TEXCOORD_" + std::to_string(t);
      if (!attrs.contains(name)) break;
      if (out.uvs.size() <= t) out.uvs.resize(t + 1);
      if (auto st = append(name.c_str(), 2, out.uvs[t], true); !st) return st;
    }
    for (auto it = attrs.begin(); it != attrs.end(); ++it) {
      if (it.key().empty() || it.key()[0] != '_') continue;
      auto a = core::json_uint32(it.value());
      if (!a) return at("BEM_PACK_ATTRIBUTE", "expected an accessor index", where + "/" + it.key());
      auto info = doc_.accessor(*a);
      if (!info) return std::move(info).error();
      if (info->components < 1 || info->components > 4)
        return at("BEM_PACK_ATTRIBUTE", "a custom attribute needs 1 to 4 components",
                  where + "/" + it.key());
      auto v = read_floats(it.value(), info->components, n, where + "/" + it.key());
      if (!v) return std::move(v).error();
      auto& slot = out.custom[it.key()];
      if (!slot.second.empty() && slot.first != info->components)
        return at("BEM_PACK_ATTRIBUTE", "the components differ between primitives",
                  where + "/" + it.key());
      slot.first = static_cast<std::uint32_t>(info->components);
      slot.second.insert(slot.second.end(), v->begin(), v->end());
    }
    if (attrs.contains("JOINTS_0") != attrs.contains("WEIGHTS_0"))
      return at("BEM_PACK_ATTRIBUTE", "JOINTS_0 and WEIGHTS_0 go together", where);
    if (attrs.contains("JOINTS_0")) {
      auto a = core::json_uint32(attrs["JOINTS_0"]);
      if (!a) return at("BEM_PACK_ATTRIBUTE", "expected an accessor index", where + "/JOINTS_0");
      auto info = doc_.accessor(*a);
      if (!info) return std::move(info).error();
      if (info->components != 4 || info->count != n)
        return at("BEM_PACK_ATTRIBUTE", "JOINTS_0 needs one VEC4 per vertex", where + "/JOINTS_0");
      auto j = doc_.read_accessor_uints(*a);
      if (!j) return std::move(j).error();
      out.joints.insert(out.joints.end(), j->begin(), j->end());
      if (auto st = append("WEIGHTS_0", 4, out.weights, true); !st) return st;
    }
    out.vertex_count += n;
    // Every group must give the same optional attributes (checked by names
    // in read_scene_mesh); the sizes then line up.
    return core::Ok{};
  }

  core::Status read_joint_names(SceneMesh& out, const std::string& mptr) {
    if (!out.node || !json()["nodes"][*out.node].contains("skin"))
      return at("BEM_PACK_JOINT", "the mesh has JOINTS_0 but its node has no skin", mptr);
    const std::string nptr = "/nodes/" + std::to_string(*out.node) + "/skin";
    auto s = core::json_uint32(json()["nodes"][*out.node]["skin"]);
    if (!s || *s >= doc_.count("skins")) return at("BEM_PACK_JOINT", "not a skin index", nptr);
    const Json& skin = json()["skins"][*s];
    const std::string sptr = "/skins/" + std::to_string(*s) + "/joints";
    if (!skin.is_object() || !skin.contains("joints") || !skin["joints"].is_array())
      return at("BEM_PACK_JOINT", "the skin has no joints array", sptr);
    for (std::size_t k = 0; k < skin["joints"].size(); ++k) {
      auto n = core::json_uint32(skin["joints"][k]);
      if (!n || *n >= doc_.count("nodes"))
        return at("BEM_PACK_JOINT", "not a node index", core::json_pointer_join(sptr, k));
      const Json& jn = json()["nodes"][*n];
      if (!jn.contains("name") || !jn["name"].is_string())
        return at("BEM_PACK_JOINT", "a joint node needs a name (the game bone it stands for)",
                  "/nodes/" + std::to_string(*n));
      out.joint_names.push_back(jn["name"].get<std::string>());
    }
    for (std::uint32_t j : out.joints)
      if (j >= out.joint_names.size())
        return at("BEM_PACK_JOINT",
                  "JOINTS_0 uses joint " + std::to_string(j) + " of a skin with " +
                      std::to_string(out.joint_names.size()),
                  mptr);
    return core::Ok{};
  }

  core::Status pack_mesh(std::uint32_t m,
                         std::pair<std::uint32_t, std::optional<std::uint32_t>> g) {
    const Mesh& mesh = model_.meshes[m];
    auto sm = read_scene_mesh(g.first, g.second);
    if (!sm) return std::move(sm).error();
    const std::size_t vc = sm->vertex_count;
    if (vc == 0)
      return at("BEM_PACK_ATTRIBUTE", "the mesh has no vertices",
                "/meshes/" + std::to_string(g.first));

    PackedMesh pm;
    pm.mesh = m;
    pm.gltf_mesh = g.first;
    pm.node = sm->node_name;
    pm.vertices_before = mesh.vertex_count;
    pm.vertices = static_cast<std::uint32_t>(vc);

    Json& mj = result_.content.manifest["meshes"][m];
    // Palette: the template's bones, then joints it lacks from the donor component.
    std::vector<std::uint32_t> palette_of_joint;  // scene joint -> palette index
    const bool skinned =
        std::any_of(mesh.attributes.begin(), mesh.attributes.end(),
                    [](const VertexAttribute& a) { return a.semantic == kBlendIndices; });
    if (skinned) {
      if (sm->joints.empty())
        return at("BEM_PACK_ATTRIBUTE",
                  "template mesh " + std::to_string(m) +
                      " is skinned; the glTF mesh needs JOINTS_0 and WEIGHTS_0",
                  "/meshes/" + std::to_string(g.first));
      auto st = build_palette(m, *sm, mj, palette_of_joint, pm);
      if (!st) return st;
    }

    // Streams.
    std::vector<std::vector<std::uint8_t>> streams(mesh.streams.size());
    for (std::size_t s = 0; s < mesh.streams.size(); ++s)
      streams[s].assign(vc * mesh.streams[s].stride, 0);
    std::uint32_t uv_set = 0;
    const float sx = options_.raw_axes ? 1.0F : -1.0F;
    for (std::size_t ai = 0; ai < mesh.attributes.size(); ++ai) {
      const VertexAttribute& a = mesh.attributes[ai];
      const std::string aptr =
          core::json_pointer_join("/meshes", m) + "/attributes/" + std::to_string(ai);
      if (a.stream >= streams.size() || a.format > 11 || a.dimension < 1 || a.dimension > 4)
        return at("BEM_PACK_TEMPLATE", "attribute not usable", aptr);
      const std::uint32_t stride = mesh.streams[a.stream].stride;
      std::uint8_t* base = streams[a.stream].data() + a.offset;
      auto need = [&](const std::vector<float>& v, const char* what) -> core::Status {
        if (v.empty())
          return at("BEM_PACK_ATTRIBUTE",
                    std::string("the template's layout stores ") + what + " (attribute " +
                        std::to_string(ai) + " of mesh " + std::to_string(m) +
                        "); the glTF mesh has none",
                    "/meshes/" + std::to_string(g.first));
        return core::Ok{};
      };
      auto emit = [&](auto&& value_of) {
        for (std::size_t v = 0; v < vc; ++v)
          for (std::uint32_t c = 0; c < a.dimension; ++c)
            write_component(base + v * stride + c * kFormatBytes[a.format], a.format,
                            value_of(v, c));
      };
      switch (a.semantic) {
        case kPosition:
          emit([&](std::size_t v, std::uint32_t c) -> double {
            return c < 3 ? (c == 0 ? sx : 1.0F) * sm->positions[3 * v + c] : 1.0;
          });
          break;
        case kNormal:
          if (auto st = need(sm->normals, "normals"); !st) return st;
          if (is_packed_tbn_attribute(a.semantic, a.format, a.dimension)) {
            if (auto st = need(sm->tangents, "tangents (in the packed normal/tangent word)"); !st)
              return st;
            for (std::size_t v = 0; v < vc; ++v) {
              const core::Vec3f n{sx * sm->normals[3 * v], sm->normals[3 * v + 1],
                                  sm->normals[3 * v + 2]};
              const core::Vec4f t{sx * sm->tangents[4 * v], sm->tangents[4 * v + 1],
                                  sm->tangents[4 * v + 2], sx * sm->tangents[4 * v + 3]};
              put<std::uint32_t>(base + v * stride, pack_tbn(n, t));
            }
          } else {
            emit([&](std::size_t v, std::uint32_t c) -> double {
              return c < 3 ? (c == 0 ? sx : 1.0F) * sm->normals[3 * v + c] : 0.0;
            });
          }
          break;
        case kTangent:
          if (auto st = need(sm->tangents, "tangents"); !st) return st;
          emit([&](std::size_t v, std::uint32_t c) -> double {
            return (c == 0 || c == 3 ? sx : 1.0F) * sm->tangents[4 * v + c];
          });
          break;
        case kColor:
          if (auto st = need(sm->colors, "vertex colours (COLOR_0)"); !st) return st;
          emit([&](std::size_t v, std::uint32_t c) -> double { return sm->colors[4 * v + c]; });
          break;
        case kBlendWeight:
          break;  // written with the indices
        case kBlendIndices: {
          auto st = write_skin(*sm, mesh, palette_of_joint, streams);
          if (!st) return st;
          break;
        }
        default: {
          if (a.semantic < kTexCoord0 || a.semantic > kTexCoord7) break;
          if (a.dimension > 2) {
            const std::string name = "_TEXCOORD" + std::to_string(a.semantic - kTexCoord0);
            auto it = sm->custom.find(name);
            if (it == sm->custom.end())
              return at("BEM_PACK_ATTRIBUTE",
                        "the template's layout stores " + std::to_string(a.dimension) +
                            "-component texture coordinates " +
                            std::to_string(a.semantic - kTexCoord0) +
                            " (bem export writes them as " + name + "); the glTF mesh has none",
                        "/meshes/" + std::to_string(g.first));
            const std::uint32_t comps = it->second.first;
            const std::vector<float>& vals = it->second.second;
            emit([&](std::size_t v, std::uint32_t c) -> double {
              return c < comps ? vals[v * comps + c] : 0.0;
            });
            break;
          }
          const std::uint32_t set = uv_set++;
          if (set >= sm->uvs.size() || sm->uvs[set].empty())
            return at("BEM_PACK_ATTRIBUTE",
                      "the template's layout stores texture coordinates " +
                          std::to_string(a.semantic - kTexCoord0) + " (TEXCOORD_" +
                          std::to_string(set) + " in glTF); the glTF mesh has none",
                      "/meshes/" + std::to_string(g.first));
          const std::vector<float>& uv = sm->uvs[set];
          emit([&](std::size_t v, std::uint32_t c) -> double {
            if (c == 0) return uv[2 * v];
            if (c == 1) return options_.raw_axes ? uv[2 * v + 1] : 1.0F - uv[2 * v + 1];
            return 0.0;
          });
        }
      }
    }
    for (std::size_t s = 0; s < streams.size(); ++s) {
      if (mesh.streams[s].stride == 0) continue;
      mj["streams"][s]["payload"] = add_payload(std::move(streams[s]));
    }
    mj["vertex_count"] = static_cast<std::uint32_t>(vc);
    const std::uint32_t index_size = vc > 65536 ? 4 : mesh.index_size;
    mj["index_size"] = index_size;

    // Draws. 1.1+: each draw its own index payload. 1.0: one index stream
    // per mesh, the draws' ranges in draw order (§7), rebuilt below.
    const bool one_stream = model_.appearance_structure;
    std::vector<std::vector<std::uint8_t>> stream_parts(mesh.draws.size());
    std::vector<bool> assigned(mesh.draws.size(), false);
    for (const SceneMesh::Primitive& prim : sm->primitives) {
      std::optional<std::size_t> d;
      for (std::size_t k = 0; k < mesh.draws.size() && !d; ++k)
        if (!assigned[k] && mesh.draws[k].material_name == prim.material) d = k;
      if (!d && !one_stream) {
        // A new draw: one of the donor component's material slots (§7).
        auto added = new_draw(m, mesh, prim.material);
        if (added) {
          Json& draws = mj["draws"];
          draws.push_back(std::move(*added));
          Json& dj = draws.back();
          dj["indices"] = add_payload(index_bytes(prim, index_size));
          dj["count"] = static_cast<std::uint32_t>(prim.indices.size());
          ++pm.draws_replaced;
          ++pm.draws_added;
          continue;
        }
      }
      if (!d) {
        // The valid names: the draws' materials, and (1.1+: new draws)
        // every component's material slots.
        std::set<std::string> names;
        for (const Draw& dr : mesh.draws) names.insert("\"" + dr.material_name + "\"");
        if (!one_stream)
          for (const Component& c : model_.components)
            for (const std::string& mat : c.materials) names.insert("\"" + mat + "\"");
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        return at("BEM_PACK_MATERIAL",
                  "the primitive's material \"" + prim.material + "\" is not the material of " +
                      (one_stream ? "a draw of template mesh " + std::to_string(m) +
                                        " left to fill (BEM 1.0: no new draws)"
                                  : std::string("a draw or a component's material slot")) +
                      "; the materials it can have: " + list,
                  prim.pointer + "/material");
      }
      assigned[*d] = true;
      std::vector<std::uint8_t> bytes = index_bytes(prim, index_size);
      Json& dj = mj["draws"][*d];
      if (one_stream)
        stream_parts[*d] = std::move(bytes);
      else
        dj["indices"] = add_payload(std::move(bytes));
      dj["count"] = static_cast<std::uint32_t>(prim.indices.size());
      ++pm.draws_replaced;
    }
    for (std::size_t k = 0; k < mesh.draws.size(); ++k) {
      if (assigned[k]) continue;
      if (options_.fresh) {  // a placeholder draw: dropped (prune_placeholders)
        dropped_draws_[m].insert(k);
        continue;
      }
      const std::string dptr =
          core::json_pointer_join("/meshes", m) + "/draws/" + std::to_string(k);
      if (vc != mesh.vertex_count || index_size != mesh.index_size)
        return at("BEM_PACK_DRAW_MISSING",
                  "draw " + std::to_string(k) + " (material \"" + mesh.draws[k].material_name +
                      "\") has no primitive in the glTF mesh, and the vertex count changed (" +
                      std::to_string(mesh.vertex_count) + " -> " + std::to_string(vc) +
                      "), so its indices cannot be kept: export a selection that shows every draw "
                      "of the mesh, or add a primitive with that material",
                  dptr);
      warn("BEM_PACK_DRAW_KEPT",
           "draw " + std::to_string(k) + " (material \"" + mesh.draws[k].material_name +
               "\") has no primitive in the glTF mesh; its indices are kept, which assumes the "
               "vertex order did not change",
           dptr);
      if (one_stream) {  // the draw's range of the template's index stream
        const Draw& dr = mesh.draws[k];
        const std::vector<std::uint8_t>& old_stream = result_.content.payloads.at(dr.indices);
        const std::size_t from = std::size_t{dr.start} * mesh.index_size;
        const std::size_t bytes = std::size_t{dr.count} * mesh.index_size;
        if (from + bytes > old_stream.size())
          return at("BEM_PACK_TEMPLATE", "the draw's range is outside the mesh's index stream",
                    dptr);
        stream_parts[k].assign(old_stream.begin() + static_cast<std::ptrdiff_t>(from),
                               old_stream.begin() + static_cast<std::ptrdiff_t>(from + bytes));
      }
      ++pm.draws_kept;
    }
    if (one_stream) {
      std::vector<std::uint8_t> all;
      std::uint32_t start = 0;
      for (std::size_t k = 0; k < mesh.draws.size(); ++k) {
        const auto count = static_cast<std::uint32_t>(stream_parts[k].size() / index_size);
        mj["draws"][k]["start"] = start;
        mj["draws"][k]["count"] = count;
        start += count;
        all.insert(all.end(), stream_parts[k].begin(), stream_parts[k].end());
      }
      mj["indices"] = add_payload(std::move(all));
      mj["index_count"] = start;
    }
    std::set<std::string> template_targets;
    if (auto st = rebuild_template_channels(m, *sm, template_targets); !st) return st;
    if (sm->targets.size() > template_targets.size()) {
      auto st = collect_targets(m, *sm, template_targets);
      if (!st) return st;
    }
    result_.meshes.push_back(std::move(pm));
    return core::Ok{};
  }

  /// A primitive's indices in the template's index size, winding reversed
  /// back to Unity's unless raw_axes.
  std::vector<std::uint8_t> index_bytes(const SceneMesh::Primitive& prim,
                                        std::uint32_t index_size) const {
    std::vector<std::uint8_t> bytes(prim.indices.size() * index_size);
    for (std::size_t i = 0; i < prim.indices.size(); ++i) {
      std::size_t src = i;
      if (!options_.raw_axes && i % 3 != 0) src = i - i % 3 + (i % 3 == 1 ? 2 : 1);  // winding
      const std::uint32_t v = prim.indices[src];
      if (index_size == 2)
        put<std::uint16_t>(bytes.data() + 2 * i, static_cast<std::uint16_t>(v));
      else
        put<std::uint32_t>(bytes.data() + 4 * i, v);
    }
    return bytes;
  }

  /// A new draw for a primitive whose material no draw of the template
  /// mesh has left: the draw of that material copied (its textures and
  /// overrides) when the mesh has one, else a draw of the donor
  /// component's material slot of that name (the component of the mesh's
  /// first draw; §7: the name must be the slot's), with no textures (the
  /// material keeps its own). Nullopt when no slot has the name.
  std::optional<Json> new_draw(std::uint32_t m, const Mesh& mesh,
                               const std::string& material) const {
    for (std::size_t k = 0; k < mesh.draws.size(); ++k)
      if (mesh.draws[k].material_name == material) return draw_json_of(mesh, k);
    for (const std::uint32_t c : donor_components(m, mesh)) {
      const auto& materials = model_.components[c].materials;
      auto it = std::find(materials.begin(), materials.end(), material);
      if (it == materials.end()) continue;
      return Json{{"when", true},
                  {"material_component", c},
                  {"material_slot", static_cast<std::uint32_t>(it - materials.begin())},
                  {"material_name", material},
                  {"textures", Json::array()}};
    }
    return std::nullopt;
  }

  /// Where a new draw's material slot is searched, in order (§7: any
  /// component can donate a material; the nearest ones first): the
  /// components the mesh's draws take materials from, those the mesh
  /// replaces, then every other component.
  std::vector<std::uint32_t> donor_components(std::uint32_t m, const Mesh& mesh) const {
    std::vector<std::uint32_t> order;
    auto add = [&](std::uint32_t c) {
      if (c < model_.components.size() && std::find(order.begin(), order.end(), c) == order.end())
        order.push_back(c);
    };
    for (const Draw& d : mesh.draws) add(d.material_component);
    for (std::uint32_t c = 0; c < model_.components.size(); ++c)
      for (const Candidate& cand : model_.components[c].candidates)
        if (cand.op == Operation::kReplace && cand.mesh == m) add(c);
    for (std::uint32_t c = 0; c < model_.components.size(); ++c) add(c);
    return order;
  }

  /// Draw k of the template mesh as the template's manifest holds it,
  /// without its index fields.
  Json draw_json_of(const Mesh& mesh, std::size_t k) const {
    const auto m = static_cast<std::size_t>(&mesh - model_.meshes.data());
    Json d = template_manifest_.at("meshes").at(m).at("draws").at(k);
    for (const char* key : {"indices", "count", "start"}) d.erase(key);
    return d;
  }

  /// PackOptions::fresh: the placeholders the scene did not fill go.
  /// Unfilled draws and unpacked meshes are dropped (their components
  /// kept), textures no packed draw uses are dropped, and a texture a packed
  /// draw uses must have had an image.
  core::Status prune_placeholders() {
    if (!options_.fresh) return core::Ok{};
    Json& man = result_.content.manifest;
    for (const auto& [m, ks] : dropped_draws_)
      for (auto k = ks.rbegin(); k != ks.rend(); ++k)
        man["meshes"][m]["draws"].erase(static_cast<std::size_t>(*k));
    std::set<std::uint32_t> packed;
    for (const PackedMesh& pm : result_.meshes) packed.insert(pm.mesh);
    std::map<std::uint32_t, std::uint32_t> new_mesh;
    Json meshes = Json::array();
    for (std::uint32_t i = 0; i < man["meshes"].size(); ++i)
      if (packed.count(i)) {
        new_mesh[i] = static_cast<std::uint32_t>(meshes.size());
        meshes.push_back(man["meshes"][i]);
      }
    std::set<std::uint32_t> given;
    for (const PackedTexture& t : result_.textures) given.insert(t.texture);
    std::map<std::uint32_t, std::uint32_t> new_texture;
    for (Json& mesh : meshes)
      for (Json& d : mesh["draws"])
        for (Json& t : d["textures"]) {
          const auto idx = core::json_uint32(t);
          if (!idx) continue;
          if (!given.count(*idx))
            return at("BEM_PACK_TEXTURE",
                      "texture " + std::to_string(*idx) + " (\"" +
                          model_.textures[*idx].original_name + "\") of material \"" +
                          d["material_name"].get<std::string>() +
                          "\" has no image in the scene: name the material's image \"" +
                          model_.textures[*idx].original_name + "\"",
                      "/images");
          new_texture.emplace(*idx, 0);
        }
    Json textures = Json::array();
    for (auto& [old, now] : new_texture) {
      now = static_cast<std::uint32_t>(textures.size());
      textures.push_back(man["textures"][old]);
    }
    for (Json& mesh : meshes)
      for (Json& d : mesh["draws"])
        for (Json& t : d["textures"])
          if (auto idx = core::json_uint32(t)) t = new_texture.at(*idx);
    for (Json& rule : man["component_rules"])
      for (Json& cand : rule["candidates"])
        if (cand.contains("mesh")) {
          auto it = new_mesh.find(cand["mesh"].get<std::uint32_t>());
          if (it == new_mesh.end())
            cand = Json{{"when", true}, {"operation", "keep"}};
          else
            cand["mesh"] = it->second;
        }
    if (man.contains("mesh_deformations"))
      for (Json& ch : man["mesh_deformations"])
        ch["mesh"] = new_mesh.at(ch["mesh"].get<std::uint32_t>());
    man["meshes"] = std::move(meshes);
    man["textures"] = std::move(textures);
    return core::Ok{};
  }

  /// A §10 parameter id from a shape key name: characters other than
  /// letters, digits, '_', '.' and '-' become '_', a leading non-alphanumeric
  /// gets an 'k' before it, at most 96 bytes.
  static std::string slider_id(const std::string& name) {
    auto alnum = [](char c) {
      return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    };
    std::string id;
    for (char c : name) id += alnum(c) || c == '_' || c == '.' || c == '-' ? c : '_';
    if (id.empty() || !alnum(id[0])) id = "k" + id;
    if (id.size() > 96) id.resize(96);
    return id;
  }

  /// The morph targets of one packed mesh, as §10 frame payloads.
  struct MeshTargets {
    std::uint32_t mesh = 0;  ///< template mesh
    std::size_t packed = 0;  ///< index into result_.meshes
    std::string pointer;     ///< /meshes/g/extras/targetNames
    std::vector<std::string> names;
    std::vector<float> weights;
    std::vector<std::uint32_t> payloads;  ///< sparse-position-f32 payload ids
  };

  /// A sparse-position-f32 frame payload (§10): descriptor, then one record
  /// per vertex the displacement moves.
  std::uint32_t delta_payload(const std::vector<float>* d, std::size_t vertices) {
    const float sx = options_.raw_axes ? 1.0F : -1.0F;
    std::vector<std::uint8_t> records;
    std::uint32_t count = 0;
    for (std::size_t v = 0; d != nullptr && v < vertices; ++v) {
      const float* p = d->data() + 3 * v;
      if (p[0] == 0.0F && p[1] == 0.0F && p[2] == 0.0F) continue;
      std::uint8_t rec[16];
      put<std::uint32_t>(rec, static_cast<std::uint32_t>(v));
      const float xyz[3] = {sx * p[0], p[1], p[2]};
      for (int c = 0; c < 3; ++c)
        put<std::uint32_t>(rec + 4 + 4 * c, std::bit_cast<std::uint32_t>(xyz[c]));
      records.insert(records.end(), rec, rec + 16);
      ++count;
    }
    const std::string descriptor =
        "{\"count\":" + std::to_string(count) + ",\"encoding\":\"sparse-position-f32\"}";
    std::vector<std::uint8_t> payload(4);
    put<std::uint32_t>(payload.data(), static_cast<std::uint32_t>(descriptor.size()));
    payload.insert(payload.end(), descriptor.begin(), descriptor.end());
    payload.insert(payload.end(), records.begin(), records.end());
    const std::uint32_t id = add_payload(std::move(payload));
    count_of_payload_[id] = count;
    return id;
  }

  /// §10 needs Float32 XYZ positions and a 1.3+ structure; the targets'
  /// displacements become frame payloads, turned into sliders once every
  /// mesh is packed (build_sliders).
  core::Status collect_targets(std::uint32_t m, const SceneMesh& sm,
                               const std::set<std::string>& skip) {
    const Mesh& mesh = model_.meshes[m];
    const std::string tptr = "/meshes/" + std::to_string(sm.gltf_mesh) + "/primitives/0/targets";
    const bool f32_position =
        std::any_of(mesh.attributes.begin(), mesh.attributes.end(), [](const VertexAttribute& a) {
          return a.semantic == kPosition && a.format == 0 && a.dimension == 3;
        });
    if (!f32_position)
      return at("BEM_PACK_SLIDER",
                "template mesh " + std::to_string(m) +
                    " does not store Float32 XYZ positions, which §10 sliders need; its morph "
                    "targets cannot become sliders",
                tptr);
    if (model_.appearance_structure)
      return at("BEM_PACK_SLIDER",
                "the template is a BEM 1.0 package, whose appearances cannot have sliders (§10 "
                "parameters need BEM 1.3 and its option groups); the shape keys cannot be packed",
                tptr);
    MeshTargets mt;
    mt.mesh = m;
    mt.packed = result_.meshes.size();
    mt.pointer = "/meshes/" + std::to_string(sm.gltf_mesh) + "/extras/targetNames";
    for (std::size_t k = 0; k < sm.targets.size(); ++k) {
      const std::string& name = sm.target_names[k];
      if (skip.count(name)) continue;
      if (name.size() > 256)
        return at("BEM_PACK_SLIDER", "the shape key name is longer than 256 bytes",
                  mt.pointer + "/" + std::to_string(k));
      if (std::find(mt.names.begin(), mt.names.end(), name) != mt.names.end())
        return at("BEM_PACK_SLIDER", "two shape keys of the mesh are named \"" + name + "\"",
                  mt.pointer + "/" + std::to_string(k));
      mt.names.push_back(name);
      mt.weights.push_back(sm.target_weights[k]);
      mt.payloads.push_back(delta_payload(&sm.targets[k], sm.vertex_count));
    }
    targets_.push_back(std::move(mt));
    return core::Ok{};
  }

  /// The template's own §10 channels on mesh m, their frames rebuilt from
  /// the scene's morph targets as bem export writes them (one per
  /// non-neutral frame: `id`, or `id@tick`), so the sliders follow the
  /// edited vertices. The parameters and frame ticks stay the template's.
  /// BEM_PACK_MORPHS when a frame has no target (an export with
  /// --bake-sliders, or the shape key was deleted or renamed).
  core::Status rebuild_template_channels(std::uint32_t m, const SceneMesh& sm,
                                         std::set<std::string>& used) {
    if (std::none_of(model_.deformations.begin(), model_.deformations.end(),
                     [&](const Deformation& d) { return d.mesh == m; }))
      return core::Ok{};
    Json& channels = result_.content.manifest["mesh_deformations"];
    for (std::size_t di = 0; di < model_.deformations.size(); ++di) {
      const Deformation& def = model_.deformations[di];
      if (def.mesh != m) continue;
      const Parameter& param = model_.parameters.at(def.parameter);
      for (std::size_t fi = 0; fi < def.frames.size(); ++fi) {
        const DeformationFrame& f = def.frames[fi];
        if (f.neutral) continue;
        const std::string name = slider_target_name(param, def, fi);
        auto it = std::find(sm.target_names.begin(), sm.target_names.end(), name);
        if (it == sm.target_names.end())
          return at("BEM_PACK_MORPHS",
                    "template mesh " + std::to_string(m) + " has the slider \"" + param.id +
                        "\"; the glTF mesh has no shape key \"" + name +
                        "\" for its frame at tick " + std::to_string(f.value) +
                        " (bem export writes one per frame; an export with --bake-sliders has "
                        "none, and a renamed or deleted shape key cannot be matched)",
                    "/meshes/" + std::to_string(sm.gltf_mesh));
        const auto k = static_cast<std::size_t>(it - sm.target_names.begin());
        const std::uint32_t payload = delta_payload(&sm.targets[k], sm.vertex_count);
        Json& fj = channels.at(di).at("frames").at(fi);
        fj["payload"] = payload;
        fj["count"] = count_of_payload_.at(payload);
        used.insert(name);
      }
    }
    return core::Ok{};
  }

  core::Status apply_spec() {
    if (options_.spec == nullptr) return core::Ok{};
    return apply_spec_fields(*options_.spec, result_.content.manifest);
  }

  /// A §10 parameter object, replacing the template's parameter of that id
  /// or appended (BEM_PACK_LIMIT past 64).
  core::Status put_parameter(Json param, const std::string& ptr) {
    Json& params = result_.content.manifest["parameters"];
    for (Json& p : params)
      if (p.is_object() && p.contains("id") && p["id"] == param["id"]) {
        p = std::move(param);
        return core::Ok{};
      }
    if (params.size() >= 64) return at("BEM_PACK_LIMIT", "more than 64 parameters (BEM §11)", ptr);
    params.push_back(std::move(param));
    return core::Ok{};
  }

  /// One mesh_deformations channel (BEM_PACK_LIMIT past 4096).
  core::Status put_channel(std::uint32_t mesh, const std::string& id, Json frames,
                           const std::string& ptr) {
    Json& channels = result_.content.manifest["mesh_deformations"];
    if (channels.size() >= 4096)
      return at("BEM_PACK_LIMIT", "more than 4096 deformation channels (BEM §11)", ptr);
    channels.push_back(Json{{"mesh", mesh}, {"parameter", id}, {"frames", std::move(frames)}});
    return core::Ok{};
  }

  Json delta_frame(std::int64_t value, std::uint32_t payload) {
    return Json{{"value", value},
                {"payload", payload},
                {"count", count_of_payload_.at(payload)},
                {"encoding", "sparse-position-f32"}};
  }

  /// §10 sliders from the packed meshes' shape keys. The spec's parameters
  /// come first: each takes one shape key (its `shape_key`, else the one
  /// named like its id) or several (`frames`), with the spec's range,
  /// neutral, step, default and condition; every mesh with one of those
  /// shape keys gets a channel (a frame of a shape key the mesh lacks moves
  /// nothing). Every other shape key name becomes a parameter of its own:
  /// ticks 0..1000, neutral 0, default from the mesh's weight, shared by
  /// every mesh with a shape key of that name and by a template parameter of
  /// that id and range.
  core::Status build_sliders() {
    const std::vector<PackSpecParameter> none;
    const std::vector<PackSpecParameter>& specified =
        options_.spec != nullptr ? options_.spec->parameters : none;
    if (targets_.empty() && specified.empty()) return core::Ok{};
    Json& manifest = result_.content.manifest;
    if (!manifest.contains("parameters")) manifest["parameters"] = Json::array();
    if (!manifest.contains("mesh_deformations")) manifest["mesh_deformations"] = Json::array();
    // Shape key names in the order met, with the first mesh's weight.
    std::vector<std::string> names;
    std::map<std::string, float> weight_of;
    std::map<std::string, std::string> pointer_of;
    for (const MeshTargets& mt : targets_)
      for (std::size_t k = 0; k < mt.names.size(); ++k)
        if (weight_of.emplace(mt.names[k], mt.weights[k]).second) {
          names.push_back(mt.names[k]);
          pointer_of[mt.names[k]] = mt.pointer + "/" + std::to_string(k);
        }
    auto known = [&] {
      std::string s;
      for (const std::string& n : names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
      return s.empty() ? std::string("none") : s;
    };
    std::set<std::string> consumed;
    for (const PackSpecParameter& sp : specified) {
      std::vector<PackSpecFrame> frames = sp.frames;
      const std::int64_t min = sp.min.value_or(0), max = sp.max.value_or(1000);
      const std::int64_t step = sp.step.value_or(1);
      const std::int64_t neutral = sp.neutral.value_or(min);
      std::int64_t fallback_default = neutral;
      if (frames.empty()) {  // one shape key
        std::string key = sp.shape_key.value_or("");
        if (key.empty())
          for (const std::string& n : names)
            if (n == sp.id || (key.empty() && slider_id(n) == sp.id)) key = n;
        if (key.empty())
          return at("BEM_PACK_SPEC",
                    "no packed mesh has a shape key for parameter \"" + sp.id +
                        "\" (give its \"shape_key\"; the shape keys: " + known() + ")",
                    sp.pointer);
        if (neutral != min && neutral != max)
          return at("BEM_PACK_SPEC",
                    "a neutral tick inside the range needs \"frames\": which shape key lies on "
                    "each side",
                    sp.pointer + "/neutral");
        const std::int64_t at_key = neutral == min ? max : min;
        frames = {PackSpecFrame{std::min(neutral, at_key), neutral <= at_key, ""},
                  PackSpecFrame{std::max(neutral, at_key), neutral > at_key, ""}};
        (frames[0].neutral ? frames[1] : frames[0]).shape_key = key;
        if (weight_of.count(key)) {
          const double w = weight_of[key];
          const auto ticks = std::llround(w * double(at_key - neutral) / double(step));
          fallback_default = std::clamp<std::int64_t>(neutral + ticks * step, min, max);
        }
      }
      if (max <= min) return at("BEM_PACK_SPEC", "\"min\" is below \"max\" (BEM §10)", sp.pointer);
      std::vector<std::string> keys;
      for (std::size_t i = 0; i < frames.size(); ++i) {
        if (frames[i].neutral) continue;
        const std::string& key = frames[i].shape_key;
        const std::string kptr = sp.frames.empty()
                                     ? sp.pointer + "/shape_key"
                                     : sp.pointer + "/frames/" + std::to_string(i) + "/shape_key";
        if (!weight_of.count(key))
          return at(
              "BEM_PACK_SPEC",
              "no packed mesh has a shape key \"" + key + "\" (the shape keys: " + known() + ")",
              kptr);
        if (!consumed.insert(key).second)
          return at("BEM_PACK_SPEC",
                    "shape key \"" + key + "\" is used by two parameters or two frames", kptr);
        keys.push_back(key);
      }
      Json param{{"id", sp.id},
                 {"name", sp.name.value_or(sp.frames.empty() ? keys.front() : sp.id)},
                 {"min", min},
                 {"max", max},
                 {"neutral", neutral},
                 {"default", sp.default_value.value_or(fallback_default)},
                 {"step", step}};
      if (sp.available_when) param["available_when"] = *sp.available_when;
      if (auto st = put_parameter(std::move(param), sp.pointer); !st) return st;
      for (const MeshTargets& mt : targets_) {
        const bool has_any = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
          return std::find(mt.names.begin(), mt.names.end(), k) != mt.names.end();
        });
        if (!has_any) continue;
        Json fj = Json::array();
        for (const PackSpecFrame& f : frames) {
          if (f.neutral) {
            fj.push_back(Json{{"value", f.value}, {"neutral", true}});
            continue;
          }
          auto it = std::find(mt.names.begin(), mt.names.end(), f.shape_key);
          const std::uint32_t payload =
              it == mt.names.end() ? delta_payload(nullptr, 0)
                                   : mt.payloads[static_cast<std::size_t>(it - mt.names.begin())];
          fj.push_back(delta_frame(f.value, payload));
        }
        if (auto st = put_channel(mt.mesh, sp.id, std::move(fj), sp.pointer); !st) return st;
        ++result_.meshes[mt.packed].sliders;
      }
    }
    Json& params = manifest["parameters"];
    for (const MeshTargets& mt : targets_)
      for (std::size_t k = 0; k < mt.names.size(); ++k) {
        const std::string& name = mt.names[k];
        if (consumed.count(name)) continue;
        const std::string tptr = mt.pointer + "/" + std::to_string(k);
        const std::string id = slider_id(name);
        auto p = std::find_if(params.begin(), params.end(), [&](const Json& x) {
          return x.is_object() && x.contains("id") && x["id"] == id;
        });
        if (p != params.end()) {
          if ((*p)["min"] != 0 || (*p)["max"] != 1000 || (*p)["neutral"] != 0)
            return at("BEM_PACK_SLIDER",
                      "shape key \"" + name + "\" would share the parameter \"" + id +
                          "\", whose range is not 0..1000 with neutral 0; rename the shape key "
                          "or describe its parameter in the spec",
                      tptr);
        } else {
          auto st = put_parameter(Json{{"id", id},
                                       {"name", name},
                                       {"min", 0},
                                       {"max", 1000},
                                       {"neutral", 0},
                                       {"default", std::lround(weight_of[name] * 1000.0F)},
                                       {"step", 1}},
                                  tptr);
          if (!st) return st;
        }
        auto st = put_channel(
            mt.mesh, id,
            Json::array({Json{{"value", 0}, {"neutral", true}}, delta_frame(1000, mt.payloads[k])}),
            tptr);
        if (!st) return st;
        ++result_.meshes[mt.packed].sliders;
      }
    return core::Ok{};
  }

  /// The payloads the packed meshes replaced are referenced no more: drop
  /// them here (renumbering the rest in order) rather than have the writer
  /// warn about them.
  void drop_replaced_payloads() {
    PackageContent& c = result_.content;
    std::vector<bool> used(c.payloads.size(), false);
    for (const PayloadRef& r : find_payload_refs(c.manifest))
      if (r.id < used.size()) used[r.id] = true;
    std::vector<std::uint32_t> new_id(c.payloads.size(), 0);
    std::vector<std::vector<std::uint8_t>> kept;
    for (std::size_t i = 0; i < c.payloads.size(); ++i) {
      if (!used[i]) continue;
      new_id[i] = static_cast<std::uint32_t>(kept.size());
      kept.push_back(std::move(c.payloads[i]));
    }
    for_each_payload_ref(c.manifest, [&](Json& v, const std::string&, std::uint32_t id) {
      if (id < new_id.size()) v = static_cast<Json::number_unsigned_t>(new_id[id]);
    });
    c.payloads = std::move(kept);
  }

  std::uint32_t add_payload(std::vector<std::uint8_t> bytes) {
    result_.content.payloads.push_back(std::move(bytes));
    return static_cast<std::uint32_t>(result_.content.payloads.size() - 1);
  }

  /// The mesh's palette: the template's bones in order, then every joint the
  /// scene's weights use that the template lacks, taken from the bone list
  /// of the component that donates the template's bones (BEM_PACK_JOINT when
  /// it has no such bone or the palette passes 256).
  core::Status build_palette(std::uint32_t m, const SceneMesh& sm, Json& mj,
                             std::vector<std::uint32_t>& palette_of_joint, PackedMesh& pm) {
    const Mesh& mesh = model_.meshes[m];
    std::vector<PaletteBone> palette = mesh.bones;
    std::optional<std::uint32_t> donor;
    if (!palette.empty()) donor = palette.front().component;
    std::vector<bool> used(sm.joint_names.size(), false);
    for (std::size_t i = 0; i < sm.joints.size(); ++i)
      if (sm.weights[i] > 0) used[sm.joints[i]] = true;
    palette_of_joint.assign(sm.joint_names.size(), 0);
    for (std::size_t j = 0; j < sm.joint_names.size(); ++j) {
      const std::string& name = sm.joint_names[j];
      auto it = std::find_if(palette.begin(), palette.end(),
                             [&](const PaletteBone& b) { return b.name == name; });
      if (it != palette.end()) {
        palette_of_joint[j] = static_cast<std::uint32_t>(it - palette.begin());
        continue;
      }
      if (!used[j]) continue;  // never weighted: no palette entry needed
      std::optional<std::uint32_t> index;
      if (donor && *donor < model_.components.size()) {
        const auto& names = model_.components[*donor].bone_names;
        auto f = std::find(names.begin(), names.end(), name);
        if (f != names.end()) index = static_cast<std::uint32_t>(f - names.begin());
      }
      if (!index)
        return at("BEM_PACK_JOINT",
                  "joint \"" + name + "\" is not a bone of " +
                      (donor ? "component " + std::to_string(*donor) + " (\"" +
                                   model_.components[*donor].mesh_name + "\")"
                             : std::string("the template mesh's palette")) +
                      ", so the game has no bone to bind it to",
                  core::json_pointer_join("/meshes", m) + "/bones");
      palette.push_back({*donor, *index, name});
      palette_of_joint[j] = static_cast<std::uint32_t>(palette.size() - 1);
      ++pm.bones_added;
    }
    if (palette.size() > 256)
      return at("BEM_PACK_JOINT",
                "template mesh " + std::to_string(m) + " would need " +
                    std::to_string(palette.size()) +
                    " palette bones; BEM §7 allows 256 per mesh (split the mesh)",
                core::json_pointer_join("/meshes", m) + "/bones");
    Json bones = Json::array();
    for (const PaletteBone& b : palette)
      bones.push_back(Json{{"component", b.component}, {"index", b.index}, {"name", b.name}});
    mj["bones"] = std::move(bones);
    pm.bones = static_cast<std::uint32_t>(palette.size());
    return core::Ok{};
  }

  /// §7 skin layouts of stream 2: 4 bytes (UInt8×4 indices, the first one
  /// rigid), 12 bytes (UNorm16×4 weights summing to exactly 65535, UInt8×4
  /// indices), 32 bytes (Float32×4 weights summing to 1, UInt32×4 indices).
  core::Status write_skin(const SceneMesh& sm, const Mesh& mesh,
                          const std::vector<std::uint32_t>& palette_of_joint,
                          std::vector<std::vector<std::uint8_t>>& streams) {
    const VertexAttribute* wa = nullptr;
    const VertexAttribute* ia = nullptr;
    for (const VertexAttribute& a : mesh.attributes) {
      if (a.semantic == kBlendWeight) wa = &a;
      if (a.semantic == kBlendIndices) ia = &a;
    }
    const std::uint32_t stride = mesh.streams[ia->stream].stride;
    std::uint8_t* data = streams[ia->stream].data();
    for (std::size_t v = 0; v < sm.vertex_count; ++v) {
      std::array<double, 4> w{};
      std::array<std::uint32_t, 4> j{};
      double sum = 0;
      for (std::size_t k = 0; k < 4; ++k) {
        w[k] = std::max(0.0F, sm.weights[4 * v + k]);
        j[k] = w[k] > 0 ? palette_of_joint[sm.joints[4 * v + k]] : 0;
        sum += w[k];
      }
      if (!(sum > 0))
        return at("BEM_PACK_ATTRIBUTE",
                  "vertex " + std::to_string(v) + " has no positive skin weight",
                  "/meshes/" + std::to_string(sm.gltf_mesh));
      for (double& x : w) x /= sum;
      std::uint8_t* p = data + v * stride;
      if (wa == nullptr) {  // 4-byte layout: the heaviest influence, rigid
        const std::size_t k =
            static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
        p[ia->offset] = static_cast<std::uint8_t>(j[k]);
        continue;
      }
      if (wa->format == 4) {  // UNorm16: exactly 65535, the rounding rest on the heaviest
        std::array<std::int64_t, 4> q{};
        std::int64_t total = 0;
        for (std::size_t k = 0; k < 4; ++k) total += q[k] = std::llround(w[k] * 65535.0);
        const std::size_t heavy =
            static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
        q[heavy] += 65535 - total;
        for (std::size_t k = 0; k < 4; ++k) {
          put<std::uint16_t>(p + wa->offset + 2 * k, static_cast<std::uint16_t>(q[k]));
          p[ia->offset + k] = static_cast<std::uint8_t>(j[k]);
        }
      } else {
        for (std::size_t k = 0; k < 4; ++k) {
          write_component(p + wa->offset + k * kFormatBytes[wa->format], wa->format, w[k]);
          write_component(p + ia->offset + k * kFormatBytes[ia->format], ia->format, j[k]);
        }
      }
    }
    return core::Ok{};
  }

  const Model& model_;
  scene::GltfDocument& doc_;
  const PackOptions& options_;
  const Json& template_manifest_;
  PackResult result_;
  std::vector<MeshTargets> targets_;
  std::map<std::uint32_t, std::set<std::size_t>> dropped_draws_;
  std::map<std::uint32_t, std::uint32_t> count_of_payload_;
};

}  // namespace

core::Result<PackResult> pack_scene(const PackageContent& template_content, const Model& model,
                                    scene::GltfDocument& scene, const PackOptions& options) {
  return ScenePacker(template_content, model, scene, options).run();
}

core::Result<PackResult> pack_project(PackageContent project, const PackOptions& options) {
  PackResult out;
  out.content = std::move(project);
  out.content.manifest_text.clear();
  if (options.spec != nullptr) {
    if (!options.spec->parameters.empty())
      return at("BEM_PACK_SPEC",
                "a project has no shape keys to make sliders of: its parameters and "
                "mesh_deformations are in its manifest",
                options.spec->parameters.front().pointer);
    if (auto st = apply_spec_fields(*options.spec, out.content.manifest); !st)
      return std::move(st).error();
  }
  if (auto st = declare_used_capabilities(out.content); !st) return std::move(st).error();
  return out;
}

}  // namespace charkit::bem
