// Inspection of a BEM package (see inspect.h). Every manifest read goes
// through the tolerant helpers below: a field of the wrong type is left out,
// never converted, so malformed manifests are described as far as they are
// readable and nothing here can throw on input.
#include "charkit/bem/inspect.h"

#include <algorithm>
#include <optional>
#include <string>

#include "charkit/bem/container.h"
#include "charkit/core/json.h"
#include "charkit/core/report.h"

namespace charkit::bem {
namespace {

using core::Json;

// Display caps: inspect output stays readable for huge manifests.
constexpr std::size_t kMaxListed = 4096;

const Json* member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::optional<std::uint32_t> u32(const Json& obj, const char* key) {
  const Json* j = member(obj, key);
  return j ? core::json_uint32(*j) : std::nullopt;
}

std::optional<std::string> str(const Json& obj, const char* key) {
  const Json* j = member(obj, key);
  if (!j || !j->is_string()) return std::nullopt;
  return j->get_ref<const std::string&>();
}

const Json* arr(const Json& obj, const char* key) {
  const Json* j = member(obj, key);
  return j && j->is_array() ? j : nullptr;
}

std::size_t arr_size(const Json& obj, const char* key) {
  const Json* a = arr(obj, key);
  return a ? a->size() : 0;
}

// Copy the listed fields under their camelCase names when they have the
// expected kind; anything else (wrong type, missing) is left out.
enum class Kind { kU32, kString, kScalar };

void copy_fields(Json& out, const Json& obj, Kind kind,
                 std::initializer_list<std::pair<const char*, const char*>> keys) {
  for (const auto& [from, to] : keys) {
    const Json* j = member(obj, from);
    if (!j) continue;
    switch (kind) {
      case Kind::kU32:
        if (auto v = core::json_uint32(*j)) out[to] = *v;
        break;
      case Kind::kString:
        if (j->is_string()) out[to] = *j;
        break;
      case Kind::kScalar:
        if (j->is_number() || j->is_string() || j->is_boolean()) out[to] = *j;
        break;
    }
  }
}

std::string version_string(int minor) {
  return "1." + std::to_string(minor);
}

double ratio(std::uint64_t stored, std::uint64_t decoded) {
  return decoded == 0 ? 0.0 : static_cast<double>(stored) / static_cast<double>(decoded);
}

// ---- manifest sections ------------------------------------------------

Json describe_component(const Json& c) {
  Json out = Json::object();
  copy_fields(out, c, Kind::kU32, {{"id", "id"}});
  copy_fields(out, c, Kind::kString, {{"mesh_name", "meshName"}});
  copy_fields(out, c, Kind::kU32, {{"original_index_count", "originalIndexCount"}});
  copy_fields(out, c, Kind::kString,
              {{"resource", "resource"},
               {"renderer_kind", "rendererKind"},
               {"renderer_path", "rendererPath"}});
  out["bones"] = arr_size(c, "bone_names");
  out["materials"] = Json::array();
  if (const Json* m = arr(c, "materials"))
    for (const auto& name : *m)
      if (name.is_string() && out["materials"].size() < kMaxListed)
        out["materials"].push_back(name);
  if (const Json* a = arr(c, "bone_name_aliases")) out["boneNameAliases"] = a->size();
  return out;
}

Json describe_target(const Json& t) {
  Json out = Json::object();
  bool explicit_form = member(t, "resources") != nullptr;
  out["form"] = explicit_form ? "explicit" : "legacy";
  copy_fields(out, t, Kind::kString,
              {{"kind", "kind"},
               {"id", "id"},
               {"character_id", "characterId"},
               {"platform", "platform"},
               {"profile_id", "profileId"},
               {"revision", "revision"},
               {"snapshot", "snapshot"},
               {"world_resource", "worldResource"},
               {"ui_resource", "uiResource"}});
  if (const Json* rs = arr(t, "resources")) {
    Json list = Json::array();
    for (const auto& r : *rs) {
      if (!r.is_object() || list.size() >= kMaxListed) continue;
      Json o = Json::object();
      copy_fields(o, r, Kind::kString,
                  {{"id", "id"}, {"name", "name"}, {"asset_path", "assetPath"}});
      copy_fields(o, r, Kind::kU32, {{"lod", "lod"}});
      Json platforms = Json::array();
      if (const Json* ps = arr(r, "platforms"))
        for (const auto& p : *ps)
          if (p.is_string()) platforms.push_back(p);
      o["platforms"] = std::move(platforms);
      list.push_back(std::move(o));
    }
    out["resources"] = std::move(list);
  }
  Json comps = Json::array();
  if (const Json* cs = arr(t, "components"))
    for (const auto& c : *cs)
      if (c.is_object() && comps.size() < kMaxListed) comps.push_back(describe_component(c));
  out["components"] = std::move(comps);
  return out;
}

Json describe_attribute(const Json& a) {
  // [semantic, format, dimension, stream, offset]; anything else is skipped.
  if (!a.is_array() || a.size() != 5) return nullptr;
  std::uint32_t v[5];
  for (std::size_t i = 0; i < 5; ++i) {
    auto x = core::json_uint32(a[i]);
    if (!x) return nullptr;
    v[i] = *x;
  }
  return Json{{"semantic", v[0]},  {"semanticName", vertex_semantic_name(v[0])},
              {"format", v[1]},    {"formatName", vertex_format_name(v[1])},
              {"dimension", v[2]}, {"stream", v[3]},
              {"offset", v[4]}};
}

Json describe_draw(const Json& d) {
  Json out = Json::object();
  copy_fields(out, d, Kind::kU32,
              {{"start", "start"},
               {"indices", "indices"},
               {"count", "count"},
               {"material_component", "materialComponent"},
               {"material_slot", "materialSlot"}});
  copy_fields(out, d, Kind::kString, {{"material_name", "materialName"}});
  if (const Json* w = member(d, "when")) out["when"] = *w;
  Json textures = Json::array();
  if (const Json* ts = arr(d, "textures"))
    for (const auto& t : *ts) {
      if (textures.size() >= 64) break;
      if (auto i = core::json_uint32(t))
        textures.push_back(*i);
      else if (auto slot = str(t, "slot"))
        textures.push_back(Json{{"slot", *slot}});
    }
  out["textures"] = std::move(textures);
  if (const Json* mo = member(d, "material_overrides"); mo && mo->is_object()) {
    Json o = Json::object();
    for (const char* key : {"floats", "colors", "vectors"})
      if (const Json* m = member(*mo, key); m && m->is_object()) o[key] = m->size();
    for (const char* key : {"enable_keywords", "disable_keywords"})
      if (const Json* m = arr(*mo, key)) o[key] = m->size();
    out["materialOverrides"] = std::move(o);
  }
  return out;
}

Json describe_mesh(const Json& m, std::size_t index) {
  Json out = Json{{"index", index}};
  copy_fields(out, m, Kind::kU32,
              {{"vertex_count", "vertexCount"},
               {"index_size", "indexSize"},
               {"indices", "indices"},
               {"index_count", "indexCount"}});
  copy_fields(out, m, Kind::kString, {{"renderer_kind", "rendererKind"}});
  Json streams = Json::array();
  if (const Json* ss = arr(m, "streams"))
    for (const auto& s : *ss) {
      if (streams.size() >= 16) break;
      Json o = Json::object();
      copy_fields(o, s, Kind::kU32, {{"stride", "stride"}, {"payload", "payload"}});
      streams.push_back(std::move(o));
    }
  out["streams"] = std::move(streams);
  Json attrs = Json::array();
  if (const Json* as = arr(m, "attributes"))
    for (const auto& a : *as) {
      if (attrs.size() >= 64) break;
      Json d = describe_attribute(a);
      if (!d.is_null()) attrs.push_back(std::move(d));
    }
  out["attributes"] = std::move(attrs);
  out["bones"] = arr_size(m, "bones");
  Json draws = Json::array();
  if (const Json* ds = arr(m, "draws"))
    for (const auto& d : *ds)
      if (d.is_object() && draws.size() < kMaxListed) draws.push_back(describe_draw(d));
  out["draws"] = std::move(draws);
  return out;
}

Json describe_texture(const Json& t, std::size_t index) {
  Json out = Json{{"index", index}};
  copy_fields(out, t, Kind::kU32,
              {{"width", "width"}, {"height", "height"}, {"mips", "mips"}, {"format", "format"}});
  if (auto f = u32(t, "format")) out["formatName"] = texture_format_name(*f);
  copy_fields(out, t, Kind::kScalar, {{"srgb", "srgb"}});
  copy_fields(out, t, Kind::kString, {{"original_name", "originalName"}});
  copy_fields(out, t, Kind::kU32, {{"payload", "payload"}});
  copy_fields(out, t, Kind::kString,
              {{"semantic", "semantic"}, {"normal_encoding", "normalEncoding"}});
  return out;
}

Json describe_groups(const Json& groups) {
  Json out = Json::array();
  for (const auto& g : groups) {
    if (!g.is_object() || out.size() >= kMaxListed) continue;
    Json o = Json::object();
    copy_fields(o, g, Kind::kString, {{"id", "id"}, {"name", "name"}, {"default", "default"}});
    o["conditional"] = member(g, "available_when") != nullptr;
    Json choices = Json::array();
    if (const Json* cs = arr(g, "choices"))
      for (const auto& c : *cs) {
        if (!c.is_object() || choices.size() >= 256) continue;
        Json co = Json::object();
        copy_fields(co, c, Kind::kString, {{"id", "id"}, {"name", "name"}});
        choices.push_back(std::move(co));
      }
    o["choices"] = std::move(choices);
    out.push_back(std::move(o));
  }
  return out;
}

Json describe_drivers(const Json& drivers) {
  Json out = Json::array();
  for (const auto& d : drivers) {
    if (!d.is_object() || out.size() >= 256) continue;
    Json o = Json::object();
    copy_fields(o, d, Kind::kScalar,
                {{"id", "id"},
                 {"name", "name"},
                 {"waveform", "waveform"},
                 {"playback", "playback"},
                 {"default_playing", "defaultPlaying"},
                 {"base_frequency", "baseFrequency"},
                 {"speed_multiplier", "speedMultiplier"}});
    Json bindings = Json::array();
    if (const Json* bs = arr(d, "bindings"))
      for (const auto& b : *bs) {
        if (!b.is_object() || bindings.size() >= 64) continue;
        Json bo = Json::object();
        copy_fields(bo, b, Kind::kString,
                    {{"type", "type"},
                     {"target", "target"},
                     {"property", "property"},
                     {"keyword", "keyword"}});
        copy_fields(bo, b, Kind::kU32,
                    {{"component", "component"}, {"material_slot", "materialSlot"}});
        bindings.push_back(std::move(bo));
      }
    o["bindings"] = std::move(bindings);
    if (const Json* s = member(d, "sound"); s && s->is_object()) {
      Json so = Json::object();
      copy_fields(so, *s, Kind::kU32, {{"payload", "payload"}});
      copy_fields(so, *s, Kind::kScalar, {{"format", "format"}, {"loop", "loop"}});
      o["sound"] = std::move(so);
    }
    out.push_back(std::move(o));
  }
  return out;
}

void describe_manifest(Json& out, const Json& m) {
  Json pkg = Json::object();
  copy_fields(
      pkg, m, Kind::kString,
      {{"package_id", "id"}, {"name", "name"}, {"author", "author"}, {"version", "version"}});
  out["package"] = std::move(pkg);
  Json caps = Json::array();
  if (const Json* cs = arr(m, "required_capabilities"))
    for (const auto& c : *cs)
      if (c.is_string() && caps.size() < 64) caps.push_back(c);
  out["capabilities"] = std::move(caps);
  if (const Json* t = member(m, "target"); t && t->is_object()) out["target"] = describe_target(*t);

  if (const Json* as = arr(m, "appearances")) {
    Json list = Json::array();
    for (const auto& a : *as) {
      if (!a.is_object() || list.size() >= kMaxListed) continue;
      Json o = Json::object();
      copy_fields(o, a, Kind::kString, {{"id", "id"}, {"name", "name"}});
      o["components"] = arr_size(a, "components");
      list.push_back(std::move(o));
    }
    out["appearances"] = std::move(list);
    if (auto d = str(m, "default_appearance_id")) out["defaultAppearance"] = *d;
  }
  if (const Json* gs = arr(m, "option_groups")) out["optionGroups"] = describe_groups(*gs);
  if (const Json* rs = arr(m, "component_rules")) {
    std::size_t candidates = 0;
    for (const auto& r : *rs) candidates += arr_size(r, "candidates");
    out["componentRules"] = Json{{"rules", rs->size()}, {"candidates", candidates}};
  }
  if (const Json* sc = arr(m, "selection_constraints")) out["selectionConstraints"] = sc->size();
  if (const Json* ts = arr(m, "texture_slots")) {
    Json list = Json::array();
    for (const auto& s : *ts) {
      if (!s.is_object() || list.size() >= kMaxListed) continue;
      Json o = Json::object();
      copy_fields(o, s, Kind::kString, {{"id", "id"}});
      o["candidates"] = arr_size(s, "candidates");
      list.push_back(std::move(o));
    }
    out["textureSlots"] = std::move(list);
  }

  Json meshes = Json::array();
  if (const Json* ms = arr(m, "meshes"))
    for (std::size_t i = 0; i < ms->size() && meshes.size() < kMaxListed; ++i)
      if ((*ms)[i].is_object()) meshes.push_back(describe_mesh((*ms)[i], i));
  out["meshes"] = std::move(meshes);
  Json textures = Json::array();
  if (const Json* ts = arr(m, "textures"))
    for (std::size_t i = 0; i < ts->size() && textures.size() < kMaxListed; ++i)
      if ((*ts)[i].is_object()) textures.push_back(describe_texture((*ts)[i], i));
  out["textures"] = std::move(textures);

  if (const Json* ps = arr(m, "parameters")) {
    Json list = Json::array();
    for (const auto& p : *ps) {
      if (!p.is_object() || list.size() >= 256) continue;
      Json o = Json::object();
      copy_fields(o, p, Kind::kString, {{"id", "id"}, {"name", "name"}});
      copy_fields(o, p, Kind::kU32,
                  {{"min", "min"},
                   {"max", "max"},
                   {"neutral", "neutral"},
                   {"default", "default"},
                   {"step", "step"}});
      o["conditional"] = member(p, "available_when") != nullptr;
      list.push_back(std::move(o));
    }
    out["parameters"] = std::move(list);
  }
  if (const Json* ds = arr(m, "mesh_deformations")) {
    Json list = Json::array();
    for (const auto& d : *ds) {
      if (!d.is_object() || list.size() >= kMaxListed) continue;
      Json o = Json::object();
      copy_fields(o, d, Kind::kU32, {{"mesh", "mesh"}});
      copy_fields(o, d, Kind::kString, {{"parameter", "parameter"}});
      o["frames"] = arr_size(d, "frames");
      list.push_back(std::move(o));
    }
    out["meshDeformations"] = std::move(list);
  }
  if (const Json* r = member(m, "root_offset"); r && r->is_object()) {
    Json o = Json::object();
    copy_fields(o, *r, Kind::kString, {{"path", "path"}});
    if (const Json* tr = arr(*r, "translation")) {
      Json v = Json::array();
      for (const auto& x : *tr)
        if (x.is_number() && v.size() < 3) v.push_back(x);
      o["translation"] = std::move(v);
    }
    out["rootOffset"] = std::move(o);
  }
  if (const Json* ds = arr(m, "drivers")) out["drivers"] = describe_drivers(*ds);
}

std::optional<int> zip_format_version(const Json& m) {
  auto s = str(m, "format_version");
  if (s && s->size() == 3 && (*s)[0] == '1' && (*s)[1] == '.' && (*s)[2] >= '0' &&
      (*s)[2] <= '0' + kMaxMinor)
    return (*s)[2] - '0';
  return std::nullopt;
}

// Manifest text -> "manifest" status plus the described sections.
void describe_manifest_text(Json& out, std::string_view text, const std::string& member_name,
                            bool zip) {
  Json status = Json::object();
  if (!member_name.empty()) status["member"] = member_name;
  status["bytes"] = text.size();
  auto parsed = core::parse_json_strict(text);
  status["parsed"] = parsed.ok() && parsed->is_object();
  if (!parsed)
    status["error"] = parsed.error().to_string();
  else if (!parsed->is_object())
    status["error"] = "manifest is not a JSON object";
  out["manifest"] = std::move(status);
  if (!parsed || !parsed->is_object()) return;
  if (zip) {
    if (auto v = zip_format_version(*parsed)) out["declaredVersion"] = version_string(*v);
  }
  describe_manifest(out, *parsed);
}

Json payload_row(std::uint32_t id, const PayloadInfo& p) {
  Json row = Json{{"id", id}, {"present", p.present}};
  if (!p.present) return row;
  row["codec"] = codec_name(p.codec);
  row["storedSize"] = p.stored_size;
  row["decodedSize"] = p.decoded_size;
  row["ratio"] = ratio(p.stored_size, p.decoded_size);
  if (!p.member.empty())
    row["member"] = p.member;
  else
    row["offset"] = p.offset;
  return row;
}

void add_payload_totals(Json& out) {
  std::uint64_t stored = 0, decoded = 0, count = 0;
  for (const auto& row : out["payloads"]) {
    if (!row.value("present", false)) continue;
    ++count;
    stored += row.value("storedSize", std::uint64_t{0});
    decoded += row.value("decodedSize", std::uint64_t{0});
  }
  out["payloadTotals"] = Json{{"count", count},
                              {"storedSize", stored},
                              {"decodedSize", decoded},
                              {"ratio", ratio(stored, decoded)}};
}

Json header_json(const Header& h) {
  return Json{{"major", h.major},
              {"minor", h.minor},
              {"headerSize", h.header_size},
              {"fileSize", h.file_size},
              {"manifestSize", h.manifest_size},
              {"payloadCount", h.payload_count},
              {"flags", h.flags}};
}

// A binary file the container reader refused (gap, trailing bytes, bad
// entry …): show the header, the manifest and the directory entries that lie
// inside the file, so a creator can see what the tool wrote.
void describe_broken_binary(Json& out, core::Bytes file) {
  Header h;
  if (!decode_header(file, h)) return;
  out["header"] = header_json(h);
  if (h.minor <= kMaxMinor) out["declaredVersion"] = version_string(h.minor);
  if (h.manifest_size < 1 || h.manifest_size > kMaxManifestSize ||
      h.manifest_size > file.size() - kHeaderSize)
    return;
  describe_manifest_text(out, core::as_chars(file.subspan(kHeaderSize, h.manifest_size)), "",
                         false);
  std::uint64_t dir = kHeaderSize + h.manifest_size;
  std::uint64_t fit = (file.size() - dir) / kDirectoryEntrySize;
  std::uint64_t n = std::min<std::uint64_t>({h.payload_count, fit, 16384});
  Json rows = Json::array();
  for (std::uint32_t i = 0; i < n; ++i) {
    DirectoryEntry e;
    if (!decode_directory_entry(file, dir + std::uint64_t{i} * kDirectoryEntrySize, e)) break;
    const std::uint32_t codec = e.codec;
    PayloadInfo p;
    p.offset = e.offset;
    p.stored_size = e.stored_size;
    p.decoded_size = e.decoded_size;
    Json row = payload_row(i, p);
    row["codec"] = codec == 0   ? "raw"
                   : codec == 1 ? "zstd"
                                : "unknown (" + std::to_string(codec) + ")";
    rows.push_back(std::move(row));
  }
  out["payloads"] = std::move(rows);
  add_payload_totals(out);
}

Json inspect_bytes(core::Bytes file, bool inside_collection);

void describe_collection(Json& out, const Package& pkg, bool inside_collection) {
  Json members = Json::array();
  for (std::size_t i = 0; i < pkg.members().size(); ++i) {
    const auto& m = pkg.members()[i];
    Json o = Json{{"name", m.name}, {"storedSize", m.stored_size}, {"decodedSize", m.decoded_size}};
    if (inside_collection) {
      o["error"] = "collection inside a collection: not expanded";
    } else if (auto bytes = pkg.read_member(i)) {
      o["package"] = inspect_bytes(bytes->bytes(), true);
    } else {
      o["error"] = bytes.error().to_string();
    }
    members.push_back(std::move(o));
  }
  out["members"] = std::move(members);
}

Json inspect_bytes(core::Bytes file, bool inside_collection) {
  Json out = Json::object();
  core::Report problems(50);
  auto pkg = Package::open(file, problems);
  std::string kind = "unknown";
  if (pkg)
    kind = container_kind_name(pkg->kind());
  else if (auto sniffed = sniff_container(file))
    kind = container_kind_name(*sniffed);
  out["container"] = kind;
  out["readable"] = pkg != nullptr;
  out["problems"] = Json::parse(problems.to_json_issues())["messages"];
  out["declaredVersion"] = nullptr;
  out["fileSize"] = file.size();
  if (!pkg) {
    if (kind == "binary") describe_broken_binary(out, file);
    return out;
  }
  if (pkg->kind() == ContainerKind::kCollection) {
    describe_collection(out, *pkg, inside_collection);
    return out;
  }
  bool zip = pkg->kind() == ContainerKind::kZip;
  if (!zip) {
    out["header"] = header_json(pkg->header());
    out["declaredVersion"] = version_string(pkg->header().minor);
  }
  describe_manifest_text(out, pkg->manifest_text(), pkg->manifest_member(), zip);
  Json rows = Json::array();
  for (std::uint32_t i = 0; i < pkg->payload_count(); ++i)
    rows.push_back(payload_row(i, pkg->payloads()[i]));
  out["payloads"] = std::move(rows);
  add_payload_totals(out);
  return out;
}

}  // namespace

core::Json inspect_package(core::Bytes file) {
  return inspect_bytes(file, false);
}

const char* vertex_semantic_name(std::uint32_t semantic) {
  static const char* const kNames[] = {"Position",    "Normal",      "Tangent",   "Color",
                                       "TexCoord0",   "TexCoord1",   "TexCoord2", "TexCoord3",
                                       "TexCoord4",   "TexCoord5",   "TexCoord6", "TexCoord7",
                                       "BlendWeight", "BlendIndices"};
  return semantic < std::size(kNames) ? kNames[semantic] : "unknown";
}

const char* vertex_format_name(std::uint32_t format) {
  static const char* const kNames[] = {"Float32", "Float16", "UNorm8", "SNorm8",
                                       "UNorm16", "SNorm16", "UInt8",  "SInt8",
                                       "UInt16",  "SInt16",  "UInt32", "SInt32"};
  return format < std::size(kNames) ? kNames[format] : "unknown";
}

const char* texture_format_name(std::uint32_t format) {
  switch (format) {
    case 4:
      return "RGBA32";
    case 10:
      return "DXT1 (BC1)";
    case 12:
      return "DXT5 (BC3)";
    case 25:
      return "BC7";
    case 26:
      return "BC4";
    case 27:
      return "BC5";
    case 48:
      return "ASTC 4x4";
    case 49:
      return "ASTC 5x5";
    case 50:
      return "ASTC 6x6";
    case 63:
      return "R8";
    default:
      return "unsupported";
  }
}

}  // namespace charkit::bem
