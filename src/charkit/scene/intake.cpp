// Model intake (docs/model.md): detection from content, the glTF / VRM JSON
// survey (GLB chunks and URIs through gltf_document.h), glTF-in-zip and FBX through Assimp.
#include "charkit/scene/intake.h"

#include <zip.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>

#include "charkit/core/bytes.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/scene/detail/fbx_import.h"
#include "charkit/scene/error_codes.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::scene {
namespace {

using core::Bytes;
using core::Error;
using core::Json;
using core::make_error;
using core::Result;

constexpr std::string_view kFbxBinaryMagic{"Kaydara FBX Binary  \0", 21};

bool starts_with(Bytes b, std::string_view s) {
  return b.size() >= s.size() && std::memcmp(b.data(), s.data(), s.size()) == 0;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && lower(s.substr(s.size() - suffix.size())) == suffix;
}

// ---------------------------------------------------------------------------
// glTF JSON survey

/// What the glTF survey needs from the container: how long the GLB BIN chunk
/// is (buffer 0 without a uri) and how to check a relative URI.
struct Container {
  std::optional<std::uint64_t> glb_bin_length;  ///< set for GLB; nullopt = no BIN chunk
  bool is_glb = false;
  /// For a zip: the size of the entry a URI resolves to, or an Error.
  /// Unset: URIs are not resolved (a standalone glTF, whose files we do not open).
  std::function<Result<std::uint64_t>(const std::string& uri, const std::string& pointer)> resolve;
};

class Survey {
 public:
  Survey(const Json& root, const GltfAsset& asset, const IntakeOptions& o, ModelInfo& info)
      : root_(root), a_(asset), o_(o), info_(info) {}

  std::optional<Error> run(const Container& c);

 private:
  std::optional<Error> asset();
  std::optional<Error> counts();
  std::optional<Error> buffers(const Container& c);
  std::optional<Error> buffer_views();
  std::optional<Error> accessors();
  void meshes();
  std::optional<Error> skins();
  std::optional<Error> images(const Container& c);
  void vrm();

  void warn(core::ErrorCode code, std::string message) {
    info_.warnings.push_back(IntakeWarning{std::move(code), std::move(message)});
  }

  const Json& root_;  // for the VRM extensions, which the glTF layer does not model
  const GltfAsset& a_;
  const IntakeOptions& o_;
  ModelInfo& info_;
};

std::optional<Error> Survey::asset() {
  if (!root_.contains("asset"))
    return core::error_at_pointer(codes::GLTF_ASSET, "glTF needs an asset object with a version",
                                  "/asset");
  if (a_.version.empty())
    return core::error_at_pointer(
        codes::GLTF_ASSET, "asset.version must be a string such as \"2.0\"", "/asset/version");
  info_.gltf_version = a_.version;
  // glTF 2.0 §3.2: "<major>.<minor>"; this reader understands major version 2.
  const std::string& ver = info_.gltf_version;
  const auto dot = ver.find('.');
  if (dot == std::string::npos || ver.substr(0, dot) != "2")
    return core::error_at_pointer(codes::GLTF_VERSION,
                                  "glTF asset version " + ver + " is not supported (need 2.x)",
                                  "/asset/version");
  info_.generator = a_.generator;
  return std::nullopt;
}

// IntakeOptions::max_count bounds every top-level array.
std::optional<Error> Survey::counts() {
  const std::pair<const char*, std::size_t> arrays[] = {
      {"buffers", a_.buffers.size()},       {"bufferViews", a_.buffer_views.size()},
      {"accessors", a_.accessors.size()},   {"meshes", a_.meshes.size()},
      {"nodes", a_.nodes.size()},           {"skins", a_.skins.size()},
      {"animations", a_.animations.size()}, {"materials", a_.materials.size()},
      {"textures", a_.textures.size()},     {"images", a_.images.size()},
      {"scenes", a_.scenes.size()}};
  for (const auto& [key, n] : arrays)
    if (n > o_.max_count)
      return core::error_at_pointer(codes::GLTF_TOO_MANY,
                                    std::string(key) + " has " + std::to_string(n) +
                                        " entries (limit " + std::to_string(o_.max_count) + ")",
                                    core::json_pointer_join("", key));
  return std::nullopt;
}

std::optional<Error> Survey::buffers(const Container& c) {
  for (std::size_t i = 0; i < a_.buffers.size(); ++i) {
    const GltfBuffer& b = a_.buffers[i];
    const std::string& ptr = b.pointer;
    const std::uint64_t len = b.byte_length;
    if (!b.uri) {
      // glTF 2.0 §4.4.3.3: buffer 0 without a uri is the GLB-stored BIN chunk.
      if (!c.is_glb || i != 0)
        return core::error_at_pointer(
            codes::GLTF_VALUE, "a buffer without a uri is allowed only as buffer 0 of a GLB", ptr);
      if (!c.glb_bin_length)
        return core::error_at_pointer(
            codes::GLB_BIN_MISSING, "buffer 0 refers to the BIN chunk, but the GLB has none", ptr);
      if (len > *c.glb_bin_length)
        return core::error_at_pointer(codes::GLTF_LENGTH,
                                      "byteLength " + std::to_string(len) +
                                          " exceeds the BIN chunk (" +
                                          std::to_string(*c.glb_bin_length) + " bytes)",
                                      ptr + "/byteLength");
      continue;
    }
    const std::string& u = *b.uri;
    if (u.rfind("data:", 0) == 0) {
      // base64 holds 3 bytes per 4 characters.
      const auto comma = u.find(',');
      const std::uint64_t payload = comma == std::string::npos ? 0 : (u.size() - comma - 1) / 4 * 3;
      if (len > payload + 2)
        return core::error_at_pointer(
            codes::GLTF_LENGTH, "byteLength " + std::to_string(len) + " exceeds the data URI", ptr);
      continue;
    }
    if (c.resolve) {
      auto size = c.resolve(u, ptr + "/uri");
      if (!size) return std::move(size).error();
      if (len > *size)
        return core::error_at_pointer(codes::GLTF_LENGTH,
                                      "byteLength " + std::to_string(len) + " exceeds the file " +
                                          u + " (" + std::to_string(*size) + " bytes)",
                                      ptr + "/byteLength");
    }
  }
  return std::nullopt;
}

std::optional<Error> Survey::buffer_views() {
  for (const GltfBufferView& v : a_.buffer_views) {
    const std::uint64_t buf_len = a_.buffers[v.buffer].byte_length;
    if (v.byte_offset + v.byte_length > buf_len)
      return core::error_at_pointer(
          codes::GLTF_LENGTH,
          "byteOffset + byteLength = " + std::to_string(v.byte_offset + v.byte_length) +
              " exceeds buffer " + std::to_string(v.buffer) + " (" + std::to_string(buf_len) +
              " bytes)",
          v.pointer);
  }
  return std::nullopt;
}

std::optional<Error> Survey::accessors() {
  for (const GltfAccessor& acc : a_.accessors) {
    const std::string& ptr = acc.pointer;
    if (acc.count == 0)
      return core::error_at_pointer(codes::GLTF_VALUE, "count must be at least 1", ptr + "/count");
    if (!acc.buffer_view) continue;  // all zeros (or sparse only): no bytes to check
    const GltfBufferView& view = a_.buffer_views[*acc.buffer_view];
    const std::uint64_t elem =
        std::uint64_t{gltf_component_size(acc.component_type)} * acc.components;
    const std::uint64_t stride = view.byte_stride != 0 ? view.byte_stride : elem;
    const std::uint64_t need = acc.byte_offset + stride * (acc.count - 1) + elem;
    if (need > view.byte_length)
      return core::error_at_pointer(codes::GLTF_LENGTH,
                                    "accessor needs " + std::to_string(need) +
                                        " bytes, bufferView " + std::to_string(*acc.buffer_view) +
                                        " has " + std::to_string(view.byte_length),
                                    ptr);
  }
  return std::nullopt;
}

void Survey::meshes() {
  info_.meshes = a_.meshes.size();
  for (const GltfMesh& mesh : a_.meshes) {
    for (const GltfPrimitive& prim : mesh.primitives) {
      ++info_.primitives;
      std::uint64_t vertex_count = 0;
      if (const auto pos = prim.attributes.find("POSITION")) {
        vertex_count = a_.accessors[*pos].count;
        info_.vertices += vertex_count;
      }
      const std::uint64_t n = prim.indices ? a_.accessors[*prim.indices].count : vertex_count;
      if (prim.mode == 4) info_.triangles += n / 3;                                // TRIANGLES
      if ((prim.mode == 5 || prim.mode == 6) && n >= 3) info_.triangles += n - 2;  // STRIP, FAN
    }
    info_.morph_targets += mesh.target_count();
  }
}

std::optional<Error> Survey::skins() {
  info_.skins = a_.skins.size();
  info_.skinned = !a_.skins.empty();
  std::unordered_set<std::size_t> joints;
  for (const GltfSkin& skin : a_.skins) {
    joints.insert(skin.joints.begin(), skin.joints.end());
    if (skin.inverse_bind_matrices &&
        a_.accessors[*skin.inverse_bind_matrices].count < skin.joints.size())
      return core::error_at_pointer(codes::GLTF_LENGTH,
                                    "inverseBindMatrices has fewer entries than joints",
                                    skin.pointer + "/inverseBindMatrices");
  }
  info_.joints = joints.size();
  return std::nullopt;
}

std::optional<Error> Survey::images(const Container& c) {
  info_.images = a_.images.size();
  for (std::size_t i = 0; i < a_.images.size(); ++i) {
    const GltfImage& im = a_.images[i];
    if (!im.uri) continue;
    const std::string& u = *im.uri;
    if (u.rfind("data:", 0) == 0 || !c.resolve) continue;
    auto size = c.resolve(u, im.pointer + "/uri");
    if (!size) {
      // Unsafe paths are errors; a missing picture still leaves a model to report.
      if (size.error().code != codes::GLTF_URI_MISSING) return std::move(size).error();
      warn(codes::IMAGE_MISSING,
           "image " + std::to_string(i) + " (" + u + ") is not in the archive");
    }
  }
  info_.textures = a_.textures.size();
  return std::nullopt;
}

// VRM 0.x humanoid (vrm-specification 0.0, humanoid.humanBones: bones that
// must be mapped) and VRM 1.0 (VRMC_vrm-1.0 humanoid.md, "Required"). 1.0
// made chest and neck optional.
const std::vector<std::string_view> kRequiredVrm0{
    "hips",     "leftUpperLeg", "rightUpperLeg", "leftLowerLeg", "rightLowerLeg",
    "leftFoot", "rightFoot",    "spine",         "chest",        "neck",
    "head",     "leftUpperArm", "rightUpperArm", "leftLowerArm", "rightLowerArm",
    "leftHand", "rightHand"};
const std::vector<std::string_view> kRequiredVrm1{
    "hips",         "spine",         "head",          "leftUpperLeg",  "leftLowerLeg",
    "leftFoot",     "rightUpperLeg", "rightLowerLeg", "rightFoot",     "leftUpperArm",
    "leftLowerArm", "leftHand",      "rightUpperArm", "rightLowerArm", "rightHand"};

// The VRM facts and warnings from the glTF layer's reading of the extension.
void Survey::vrm() {
  if (!a_.vrm) return;
  const GltfVrm& g = *a_.vrm;
  VrmInfo v;
  v.version = g.version;
  v.spec_version = g.spec_version;
  v.exporter_version = g.exporter_version;
  v.title = g.title;
  v.author = g.author;
  v.model_version = g.model_version;
  v.humanoid_bones = g.human_bones.size();
  if (g.both)
    warn(codes::VRM_BOTH_VERSIONS, "both VRM (0.x) and VRMC_vrm (1.0) are present; reporting 1.0");
  std::set<std::string> present;
  for (const VrmHumanBone& b : g.human_bones)
    if (!present.insert(b.bone).second)
      warn(codes::VRM_DUPLICATE_BONE, "humanoid bone " + b.bone + " is mapped twice");
  for (auto req : required_humanoid_bones(g.version))
    if (!present.count(std::string(req))) v.missing_bones.emplace_back(req);
  info_.vrm = std::move(v);
  info_.format = ModelFormat::kVrm;
  const std::string ext_name = g.version == "1.0" ? "VRMC_vrm" : "VRM";
  const bool listed = std::find(a_.extensions_used.begin(), a_.extensions_used.end(), ext_name) !=
                      a_.extensions_used.end();
  if (!listed)
    warn(codes::VRM_NOT_IN_EXTENSIONS_USED, ext_name + " is not listed in extensionsUsed");
  if (!info_.vrm->missing_bones.empty())
    warn(codes::VRM_REQUIRED_BONES_MISSING, std::to_string(info_.vrm->missing_bones.size()) +
                                                " required humanoid bones are not mapped");
}

std::optional<Error> Survey::run(const Container& c) {
  if (auto e = asset()) return e;
  if (auto e = counts()) return e;
  info_.nodes = a_.nodes.size();
  if (auto e = buffers(c)) return e;
  if (auto e = buffer_views()) return e;
  if (auto e = accessors()) return e;
  meshes();
  if (auto e = skins()) return e;
  if (auto e = images(c)) return e;
  info_.materials = a_.materials.size();
  info_.animations = a_.animations.size();
  vrm();
  return std::nullopt;
}

// The JSON text's size against options.max_json_bytes (offset = where the
// text starts in the file).
std::optional<Error> json_too_large(std::size_t size, std::uint64_t offset,
                                    const IntakeOptions& o) {
  if (size <= o.max_json_bytes) return std::nullopt;
  return core::error_at_offset(codes::GLTF_TOO_MANY,
                               "glTF JSON of " + std::to_string(size) +
                                   " bytes is over the limit of " +
                                   std::to_string(o.max_json_bytes),
                               offset);
}

// Parses the JSON text (offset = where it starts in the file) and surveys it.
Result<ModelInfo> survey_json(std::string_view text, std::uint64_t offset, const IntakeOptions& o,
                              ModelInfo info, const Container& c) {
  if (auto e = json_too_large(text.size(), offset, o)) return std::move(*e);
  auto json = parse_gltf_json(text, offset);
  if (!json) return std::move(json).error();
  auto asset = read_gltf_asset(*json);  // every index and member type (gltf_asset.h)
  if (!asset) return std::move(asset).error();
  Survey s(*json, *asset, o, info);
  if (auto e = s.run(c)) return std::move(*e);
  return info;
}

// ---------------------------------------------------------------------------
// Containers

// glTF 2.0 §4.4 (GLB): header magic/version/length, chunk 0 JSON, then
// optional BIN; every chunk length checked against the declared length.
Result<ModelInfo> inspect_glb(Bytes b, const IntakeOptions& o) {
  ModelInfo info;
  info.container = ModelContainer::kGlb;
  auto chunks = split_glb(b);  // the one GLB chunk walk (gltf_document.h)
  if (!chunks) return std::move(chunks).error();
  for (auto& w : chunks->warnings)
    info.warnings.push_back({std::move(w.code), std::move(w.message)});
  Container c;
  c.is_glb = true;
  if (chunks->bin) c.glb_bin_length = chunks->bin->size();
  return survey_json(core::as_chars(chunks->json), 20, o, std::move(info), c);
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

Result<ModelInfo> inspect_zip(Bytes b, const IntakeOptions& o) {
  zip_error_t zerr;
  zip_error_init(&zerr);
  zip_source_t* src = zip_source_buffer_create(b.data(), b.size(), 0, &zerr);
  if (!src) {
    zip_error_fini(&zerr);
    return core::error_at_offset(codes::ZIP_OPEN, "cannot read the archive", 0);
  }
  std::unique_ptr<zip_t, ZipCloser> z(zip_open_from_source(src, ZIP_RDONLY, &zerr));
  if (!z) {
    std::string msg = zip_error_strerror(&zerr);
    zip_source_free(src);
    zip_error_fini(&zerr);
    return core::error_at_offset(codes::ZIP_OPEN, "not a readable zip archive: " + msg, 0);
  }
  zip_error_fini(&zerr);
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  if (n < 0 || static_cast<std::uint64_t>(n) > o.max_zip_entries)
    return core::error_at_offset(codes::ZIP_TOO_MANY_ENTRIES,
                                 "the archive has " + std::to_string(n) + " entries (limit " +
                                     std::to_string(o.max_zip_entries) + ")",
                                 0);
  std::map<std::string, std::pair<zip_uint64_t, std::uint64_t>> entries;  // name -> (index, size)
  std::vector<std::string> gltfs;
  std::uint64_t total = 0;
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(z.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      return make_error(codes::ZIP_READ, "cannot read the directory entry " + std::to_string(i));
    const std::string name = st.name;
    total += st.size;
    if (total > o.max_zip_total_bytes)
      return make_error(codes::ZIP_TOO_LARGE, "the archive unpacks to more than " +
                                                  std::to_string(o.max_zip_total_bytes) + " bytes");
    if (name.empty() || name.back() == '/') continue;
    if (name.rfind("__MACOSX/", 0) == 0) continue;  // Finder's resource forks
    entries.emplace(name, std::make_pair(static_cast<zip_uint64_t>(i), st.size));
    if (ends_with_ci(name, ".gltf")) gltfs.push_back(name);
  }
  if (gltfs.empty()) return make_error(codes::ZIP_NO_GLTF, "the archive holds no .gltf file");
  if (gltfs.size() > 1)
    return make_error(codes::ZIP_MANY_GLTF, "the archive holds " + std::to_string(gltfs.size()) +
                                                " .gltf files (" + gltfs[0] + ", " + gltfs[1] +
                                                " …); expected one");
  const std::string gltf_name = gltfs[0];
  const auto [gltf_index, gltf_size] = entries.at(gltf_name);
  auto member_error = [&](core::ErrorCode code, std::string msg) {
    Error e = make_error(std::move(code), std::move(msg));
    e.location.member = gltf_name;
    return e;
  };
  if (gltf_size > o.max_json_bytes)
    return member_error(codes::GLTF_TOO_MANY, "the .gltf is " + std::to_string(gltf_size) +
                                                  " bytes (limit " +
                                                  std::to_string(o.max_json_bytes) + ")");
  std::string text(static_cast<std::size_t>(gltf_size), '\0');
  {
    zip_file_t* f = zip_fopen_index(z.get(), gltf_index, 0);
    if (!f) return member_error(codes::ZIP_READ, "cannot open the entry");
    std::size_t got = 0;
    while (got < text.size()) {
      const zip_int64_t r = zip_fread(f, text.data() + got, text.size() - got);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    const bool ok = got == text.size();
    zip_fclose(f);  // also checks the CRC once the whole entry has been read
    if (!ok)
      return member_error(codes::ZIP_READ,
                          "the entry is damaged or shorter than its directory says");
  }
  const auto slash = gltf_name.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : gltf_name.substr(0, slash);
  Container c;
  c.resolve = [&](const std::string& uri, const std::string& ptr) -> Result<std::uint64_t> {
    auto member = resolve_gltf_uri(dir, uri, ptr);
    if (!member) return std::move(member).error();
    auto it = entries.find(*member);
    if (it == entries.end())
      return core::error_at_pointer(
          codes::GLTF_URI_MISSING,
          "uri " + uri + " names " + *member + ", which is not in the archive", ptr);
    return it->second.second;
  };
  ModelInfo info;
  info.container = ModelContainer::kZip;
  info.zip_gltf_entry = gltf_name;
  auto r = survey_json(text, 0, o, std::move(info), c);
  if (!r) {
    Error e = std::move(r).error();
    e.location.member = gltf_name;
    return e;
  }
  return r;
}

// FBX binary header (23 bytes of magic incl. 0x1A 0x00, then the UInt32 version).
Result<ModelInfo> inspect_fbx(Bytes b, bool binary, const IntakeOptions& o) {
  ModelInfo info;
  info.format = ModelFormat::kFbx;
  info.container = binary ? ModelContainer::kFbxBinary : ModelContainer::kFbxAscii;
  if (binary) {
    if (b.size() < 27)
      return core::error_at_offset(codes::FBX_HEADER, "the FBX binary header needs 27 bytes",
                                   b.size());
    if (b[21] != 0x1A || b[22] != 0x00)
      return core::error_at_offset(codes::FBX_HEADER, "bytes 21..22 must be 1A 00", 21);
    info.fbx_version = core::load_le<std::uint32_t>(b.data() + 23);
  } else {
    // "; FBX 7.4.0 project file" → 7400; else the FBXVersion: property.
    const std::string_view head = core::as_chars(b.first(std::min<std::size_t>(b.size(), 8192)));
    auto digits_at = [&](std::size_t p, int parts) {
      std::uint32_t v = 0;
      int got = 0;
      while (p < head.size() && got < parts) {
        if (head[p] >= '0' && head[p] <= '9') {
          v = v * 10 + static_cast<std::uint32_t>(head[p] - '0');
          if (v > 1000000) return std::uint32_t{0};
        } else if (head[p] == '.') {
          ++got;
        } else {
          break;
        }
        ++p;
      }
      return v;
    };
    if (auto p = head.find("; FBX "); p != std::string_view::npos) {
      // x.y.z → x*1000 + y*100 + z*10 (7.4.0 → 7400)
      std::size_t q = p + 6;
      std::uint32_t parts[3] = {0, 0, 0};
      for (int k = 0; k < 3 && q < head.size(); ++k) {
        while (q < head.size() && head[q] >= '0' && head[q] <= '9' && parts[k] < 100000)
          parts[k] = parts[k] * 10 + static_cast<std::uint32_t>(head[q++] - '0');
        if (q < head.size() && head[q] == '.')
          ++q;
        else
          break;
      }
      info.fbx_version = parts[0] * 1000 + parts[1] * 100 + parts[2] * 10;
    } else if (auto v = head.find("FBXVersion:"); v != std::string_view::npos) {
      std::size_t q = v + 11;
      while (q < head.size() && head[q] == ' ') ++q;
      info.fbx_version = digits_at(q, 0);
    }
  }
  if (!o.use_assimp) return info;
  if (b.size() > o.max_fbx_bytes)
    return core::error_at_offset(
        codes::FBX_TOO_LARGE, "FBX of " + std::to_string(b.size()) + " bytes is over the limit", 0);
  // The counts come back as u64s and the generator as text.
  auto answer = detail::import_fbx_counts(b);
  if (!answer) return std::move(answer).error();
  core::ByteReader r(*answer);
  std::uint64_t v[10] = {};
  for (auto& x : v)
    if (!r.read(x))
      return core::error_at_offset(codes::FBX_IMPORT, "the FBX import process sent a short answer",
                                   0);
  auto size = [](std::uint64_t x) { return static_cast<std::size_t>(x); };
  info.meshes = size(v[0]);
  info.primitives = size(v[0]);
  info.materials = size(v[1]);
  info.textures = size(v[2]);
  info.animations = size(v[3]);
  info.vertices = v[4];
  info.triangles = v[5];
  info.morph_targets = size(v[6]);
  info.joints = size(v[7]);
  info.skinned = v[7] > 0;
  info.skins = size(v[8]);
  info.nodes = size(v[9]);
  core::Bytes rest;
  if (r.read_bytes(r.remaining(), rest)) info.generator = std::string(core::as_chars(rest));
  return info;
}

bool looks_like_fbx_ascii(Bytes b) {
  std::string_view head = core::as_chars(b.first(std::min<std::size_t>(b.size(), 4096)));
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  if (head.substr(first, 6) == "; FBX ") return true;
  // Only comments and blank lines may precede FBXHeaderExtension.
  return head[first] == ';' ? head.find("\nFBXHeaderExtension") != std::string_view::npos
                            : head.substr(first, 18) == "FBXHeaderExtension";
}

void name_warnings(const IntakeOptions& o, ModelInfo& info) {
  if (o.name.empty()) return;
  const bool is_vrm = info.format == ModelFormat::kVrm;
  if (ends_with_ci(o.name, ".vrm") && !is_vrm)
    info.warnings.push_back(
        {codes::VRM_EXTENSION_MISSING,
         "the file is named .vrm but has neither extensions.VRM nor extensions.VRMC_vrm"});
  if (is_vrm && info.container != ModelContainer::kGlb)
    info.warnings.push_back(
        {codes::VRM_NOT_GLB, "VRM is defined as a GLB file; this one is a glTF JSON document"});
  const bool named_glb = ends_with_ci(o.name, ".glb");
  const bool named_gltf = ends_with_ci(o.name, ".gltf");
  const bool named_fbx = ends_with_ci(o.name, ".fbx");
  if ((named_glb && info.container != ModelContainer::kGlb) ||
      (named_gltf && info.container != ModelContainer::kGltfJson) ||
      (named_fbx && info.format != ModelFormat::kFbx))
    info.warnings.push_back(
        {codes::NAME_MISMATCH, "the file name's extension does not match its content (" +
                                   std::string(container_name(info.container)) + ")"});
}

}  // namespace

std::string_view format_name(ModelFormat f) {
  switch (f) {
    case ModelFormat::kGltf:
      return "gltf";
    case ModelFormat::kVrm:
      return "vrm";
    case ModelFormat::kFbx:
      return "fbx";
  }
  return "?";
}

std::string_view container_name(ModelContainer c) {
  switch (c) {
    case ModelContainer::kGlb:
      return "glb";
    case ModelContainer::kGltfJson:
      return "gltf-json";
    case ModelContainer::kZip:
      return "zip";
    case ModelContainer::kFbxBinary:
      return "fbx-binary";
    case ModelContainer::kFbxAscii:
      return "fbx-ascii";
  }
  return "?";
}

const std::vector<std::string_view>& required_humanoid_bones(std::string_view vrm_version) {
  return vrm_version == "1.0" ? kRequiredVrm1 : kRequiredVrm0;
}

Result<ModelInfo> inspect_model(Bytes b, const IntakeOptions& o) {
  Result<ModelInfo> r = make_error(codes::MODEL_FORMAT_UNKNOWN, "", {});
  if (is_glb(b)) {
    r = inspect_glb(b, o);
  } else if (starts_with(b, "PK\x03\x04") || starts_with(b, "PK\x05\x06")) {
    r = inspect_zip(b, o);
  } else if (starts_with(b, kFbxBinaryMagic)) {
    r = inspect_fbx(b, true, o);
  } else if (looks_like_fbx_ascii(b)) {
    r = inspect_fbx(b, false, o);
  } else {
    const std::string_view text = core::as_chars(b);
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
      ModelInfo info;
      info.container = ModelContainer::kGltfJson;
      r = survey_json(text, 0, o, std::move(info), Container{});
    } else {
      return core::error_at_offset(
          codes::MODEL_FORMAT_UNKNOWN,
          "not a model this tool knows: expected GLB (glTF magic), glTF JSON, a zip "
          "with a .gltf, or FBX",
          0);
    }
  }
  if (r) name_warnings(o, *r);
  return r;
}

Result<InspectedModel> inspect_and_load_model(Bytes b, const IntakeOptions& o) {
  const std::string_view text = core::as_chars(b);
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool json_text =
      !is_glb(b) && first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
  if (!is_glb(b) && !json_text) {  // FBX, zip or unknown: inspect_model alone
    auto info = inspect_model(b, o);
    if (!info) return std::move(info).error();
    return InspectedModel{std::move(*info), std::nullopt};
  }
  InspectedModel out;
  Container c;
  if (json_text) {
    out.info.container = ModelContainer::kGltfJson;
    if (auto e = json_too_large(b.size(), 0, o)) return std::move(*e);
  } else {
    out.info.container = ModelContainer::kGlb;
    auto chunks = split_glb(b);  // cheap: no copy; its warnings go to the info
    if (!chunks) return std::move(chunks).error();
    for (auto& w : chunks->warnings)
      out.info.warnings.push_back({std::move(w.code), std::move(w.message)});
    c.is_glb = true;
    if (chunks->bin) c.glb_bin_length = chunks->bin->size();
    if (auto e = json_too_large(chunks->json.size(), 20, o)) return std::move(*e);
  }
  GltfLoadOptions lo;
  lo.max_json_depth = core::JsonLimits{}.max_depth;  // inspect_model's nesting limit
  auto doc = GltfDocument::load(b, lo);
  if (!doc) return std::move(doc).error();
  Survey s(doc->json(), doc->asset(), o, out.info);
  if (auto e = s.run(c)) return std::move(*e);
  name_warnings(o, out.info);
  out.document = std::move(*doc);
  return out;
}

Result<ModelInfo> inspect_model_file(const std::string& path, IntakeOptions options) {
  auto file = core::MappedFile::open(path);
  if (!file) return std::move(file).error();
  if (options.name.empty()) options.name = path;
  return inspect_model(file->bytes(), options);
}

}  // namespace charkit::scene
