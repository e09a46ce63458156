#include "package_builder.h"
#include "charkit/core/json.h"

#include <cstring>
#include <stdexcept>

#include <zlib.h>
#include <zstd.h>

namespace charkit::testkit {
namespace {

void append(ByteVec& b, const ByteVec& d) {
  b.insert(b.end(), d.begin(), d.end());
}
void append(ByteVec& b, const std::string& s) {
  b.insert(b.end(), s.begin(), s.end());
}

ByteVec raw_deflate(const ByteVec& data) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  ByteVec out(deflateBound(&zs, static_cast<uLong>(data.size())) + 16);
  zs.next_in = const_cast<Bytef*>(data.data());
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

ByteVec zstd_frame(const ByteVec& data, int level) {
  ByteVec out(ZSTD_compressBound(data.size()));
  std::size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), level);
  if (ZSTD_isError(n)) throw std::runtime_error("ZSTD_compress");
  out.resize(n);
  return out;
}

std::uint64_t directory_offset(const BinaryLayout& l) {
  return 40 + l.manifest.size();
}

ByteVec build_binary(const BinaryLayout& l,
                     const std::optional<std::vector<DirectoryEntry>>& entries) {
  std::vector<ByteVec> stored;
  std::vector<DirectoryEntry> dir;
  std::uint64_t payload_start = directory_offset(l) + 32ull * l.payloads.size();
  std::uint64_t off = payload_start;
  for (const auto& p : l.payloads) {
    ByteVec s = p.zstd ? zstd_frame(p.decoded) : p.decoded;
    dir.push_back({p.zstd ? 1u : 0u, 0, off, s.size(), p.decoded.size()});
    off += s.size();
    stored.push_back(std::move(s));
  }
  if (entries) dir = *entries;

  ByteVec b;
  const std::uint8_t magic[8] = {0x42, 0x45, 0x4D, 0x00, 0x50, 0x4B, 0x47, 0x00};
  b.insert(b.end(), magic, magic + 8);
  u16le(b, l.major);
  u16le(b, l.minor);
  u32le(b, l.header_size);
  std::size_t file_size_pos = b.size();
  u64le(b, 0);
  u64le(b, l.manifest_size.value_or(l.manifest.size()));
  u32le(b, l.payload_count.value_or(static_cast<std::uint32_t>(dir.size())));
  u32le(b, l.flags);
  append(b, l.manifest);
  for (const auto& e : dir) {
    u32le(b, e.codec);
    u32le(b, e.reserved);
    u64le(b, e.offset);
    u64le(b, e.stored_size);
    u64le(b, e.decoded_size);
  }
  for (const auto& s : stored) append(b, s);
  append(b, l.trailing);
  std::uint64_t fs = l.file_size.value_or(b.size());
  for (int i = 0; i < 8; ++i) b[file_size_pos + i] = static_cast<std::uint8_t>(fs >> (8 * i));
  return b;
}

ByteVec build_zip(const std::vector<ZipEntry>& entries, const ZipOptions& options) {
  ByteVec out, central;
  const std::uint16_t kTime = 0x6000, kDate = 0x5A21;  // a fixed DOS date/time
  for (const auto& e : entries) {
    ByteVec data = e.method == 8 ? raw_deflate(e.data) : e.data;
    std::uint32_t crc =
        static_cast<std::uint32_t>(crc32(0, e.data.data(), static_cast<uInt>(e.data.size())));
    std::uint64_t local_offset = out.size();
    std::uint16_t needed = e.zip64 ? 45 : 20;
    // Local file header.
    u32le(out, 0x04034b50);
    u16le(out, needed);
    u16le(out, e.flags);
    u16le(out, e.method);
    u16le(out, kTime);
    u16le(out, kDate);
    u32le(out, crc);
    u32le(out, e.zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(data.size()));
    u32le(out, e.zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(e.data.size()));
    u16le(out, static_cast<std::uint16_t>(e.name.size()));
    u16le(out, e.zip64 ? 20 : 0);
    append(out, e.name);
    if (e.zip64) {
      u16le(out, 0x0001);
      u16le(out, 16);
      u64le(out, e.data.size());
      u64le(out, data.size());
    }
    append(out, data);
    // Central directory header.
    u32le(central, 0x02014b50);
    u16le(central, 0x0300 | needed);  // made by: UNIX
    u16le(central, needed);
    u16le(central, e.flags);
    u16le(central, e.method);
    u16le(central, kTime);
    u16le(central, kDate);
    u32le(central, crc);
    u32le(central, e.zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(data.size()));
    u32le(central, e.zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(e.data.size()));
    u16le(central, static_cast<std::uint16_t>(e.name.size()));
    u16le(central, e.zip64 ? 28 : 0);
    u16le(central, 0);               // comment
    u16le(central, 0);               // disk
    u16le(central, 0);               // internal attributes
    u32le(central, 0100644u << 16);  // external attributes: regular file
    u32le(central, e.zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(local_offset));
    append(central, e.name);
    if (e.zip64) {
      u16le(central, 0x0001);
      u16le(central, 24);
      u64le(central, e.data.size());
      u64le(central, data.size());
      u64le(central, local_offset);
    }
  }
  std::uint64_t cd_offset = out.size();
  append(out, central);
  if (options.zip64_end) {
    std::uint64_t z64_offset = out.size();
    u32le(out, 0x06064b50);
    u64le(out, 44);
    u16le(out, 45);
    u16le(out, 45);
    u32le(out, 0);
    u32le(out, 0);
    u64le(out, entries.size());
    u64le(out, entries.size());
    u64le(out, central.size());
    u64le(out, cd_offset);
    u32le(out, 0x07064b50);
    u32le(out, 0);
    u64le(out, z64_offset);
    u32le(out, 1);
  }
  u32le(out, 0x06054b50);
  u16le(out, 0);
  u16le(out, 0);
  u16le(out, options.zip64_end ? 0xFFFF : static_cast<std::uint16_t>(entries.size()));
  u16le(out, options.zip64_end ? 0xFFFF : static_cast<std::uint16_t>(entries.size()));
  u32le(out, options.zip64_end ? 0xFFFFFFFFu : static_cast<std::uint32_t>(central.size()));
  u32le(out, options.zip64_end ? 0xFFFFFFFFu : static_cast<std::uint32_t>(cd_offset));
  u16le(out, 0);
  return out;
}

ByteVec TestPackage::binary(bool zstd) const {
  BinaryLayout l;
  l.minor = static_cast<std::uint16_t>(minor);
  l.manifest = manifest.dump();
  for (const auto& p : payloads) l.payloads.push_back({p, zstd});
  return build_binary(l);
}

ByteVec TestPackage::zip(bool deflate, bool with_format_version, const std::string& folder) const {
  Json m = manifest;
  if (with_format_version) m["format_version"] = "1." + std::to_string(minor);
  std::vector<ZipEntry> entries;
  std::string d = m.dump();
  entries.push_back({folder + "manifest.json", ByteVec(d.begin(), d.end()),
                     static_cast<std::uint16_t>(deflate ? 8 : 0)});
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    entries.push_back(
        {folder + payload_name(i), payloads[i], static_cast<std::uint16_t>(deflate ? 8 : 0)});
  }
  return build_zip(entries);
}

std::string payload_name(std::size_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "payloads/%04zu.bin", i);
  return name;
}

void u16le(ByteVec& b, std::uint16_t v) {
  for (int i = 0; i < 2; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void u32le(ByteVec& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void u64le(ByteVec& b, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

ByteVec f32_bytes(const std::vector<float>& v) {
  ByteVec b;
  for (float f : v) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    u32le(b, u);
  }
  return b;
}
ByteVec u16_bytes(const std::vector<std::uint16_t>& v) {
  ByteVec b;
  for (auto x : v) u16le(b, x);
  return b;
}
ByteVec u32_bytes(const std::vector<std::uint32_t>& v) {
  ByteVec b;
  for (auto x : v) u32le(b, x);
  return b;
}

namespace {

Json base_target_components() {
  return Json::array({
      Json{{"id", 0},
           {"mesh_name", "S_actor_example_body_01_lod0"},
           {"original_index_count", 300},
           {"bone_names", Json::array({"Bip001_Pelvis", "Bip001_Spine"})},
           {"materials", Json::array({"M_actor_example_body_01"})}},
      Json{{"id", 1},
           {"mesh_name", "S_actor_example_hair_01_lod0"},
           {"original_index_count", 150},
           {"bone_names", Json::array({"Bip001_Head"})},
           {"materials", Json::array({"M_actor_example_hair_01"})}},
  });
}

Json base_mesh() {
  return Json{
      {"vertex_count", 3},
      {"index_size", 2},
      {"streams",
       Json::array({Json{{"stride", 12}, {"payload", 0}}, Json{{"stride", 8}, {"payload", 1}},
                    Json{{"stride", 4}, {"payload", 2}}})},
      {"attributes", Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({4, 0, 2, 1, 0}),
                                  Json::array({13, 6, 4, 2, 0})})},
      {"bones", Json::array({Json{{"component", 0}, {"index", 0}, {"name", "Bip001_Pelvis"}}})}};
}

Json base_texture() {
  return Json{{"width", 4},  {"height", 4},  {"mips", 1},
              {"format", 4}, {"srgb", true}, {"original_name", "T_actor_example_body_01_d"},
              {"payload", 4}};
}

std::vector<ByteVec> base_payloads() {
  return {
      f32_bytes({0, 0, 0, 1, 0, 0, 0, 1, 0}),       // 0: positions (3 × Float32×3)
      f32_bytes({0, 0, 1, 0, 0, 1}),                // 1: uv (3 × Float32×2)
      ByteVec{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  // 2: rigid skin, bone 0
      u16_bytes({0, 1, 2}),                         // 3: indices
      ByteVec(64, 0x80),                            // 4: 4×4 RGBA32
  };
}

}  // namespace

void make_quad_skin_mesh(Json& mesh) {
  mesh["vertex_count"] = 4;
  mesh["streams"] =
      Json::array({Json{{"stride", 24}, {"payload", 0}}, Json{{"stride", 8}, {"payload", 1}},
                   Json{{"stride", 12}, {"payload", 2}}});
  mesh["attributes"] = Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 3, 0, 12}),
                                    Json::array({4, 0, 2, 1, 0}), Json::array({12, 4, 4, 2, 0}),
                                    Json::array({13, 6, 4, 2, 8})});
  mesh["bones"] = Json::array({Json{{"component", 0}, {"index", 0}, {"name", "Bip001_Pelvis"}},
                               Json{{"component", 0}, {"index", 1}, {"name", "Bip001_Spine"}}});
}

TestPackage make_valid_package(int minor) {
  TestPackage p;
  p.minor = minor;
  Json m;
  m["schema"] = 1;
  m["package_id"] = "example.package";
  m["name"] = "Example";
  m["author"] = "charkit tests";
  m["version"] = "1.0.0";
  Json caps = Json::array({"native-materials", "palette-u8", "indices-u32"});
  caps.push_back(minor == 0 ? "fixed-appearances" : "composable-options");
  m["required_capabilities"] = caps;
  m["target"] = Json{{"character_id", "chr_0013_aglina"},
                     {"platform", "windows-x64"},
                     {"profile_id", "aglina.windows"},
                     {"revision", "20260918"},
                     {"snapshot", ""},
                     {"world_resource", "chr_0013_aglina_postmodel"},
                     {"ui_resource", "chr_0013_aglina_uimodel"},
                     {"components", base_target_components()}};
  Json mesh = base_mesh();
  Json draw = {{"material_component", 0},
               {"material_slot", 0},
               {"material_name", "M_actor_example_body_01"},
               {"textures", Json::array({0})}};
  if (minor == 0) {
    mesh["indices"] = 3;
    mesh["index_count"] = 3;
    Json d = Json{{"start", 0}, {"count", 3}};
    d.update(draw);
    mesh["draws"] = Json::array({d});
  } else {
    Json d = Json{{"when", true}, {"indices", 3}, {"count", 3}};
    d.update(draw);
    mesh["draws"] = Json::array({d});
  }
  m["meshes"] = Json::array({mesh});
  m["textures"] = Json::array({base_texture()});
  if (minor == 0) {
    m["default_appearance_id"] = "outfit-a";
    m["appearances"] = Json::array({Json{
        {"id", "outfit-a"},
        {"name", "Outfit A"},
        {"components", Json::array({Json{{"target", 0}, {"operation", "replace"}, {"mesh", 0}},
                                    Json{{"target", 1}, {"operation", "keep"}}})}}});
  } else {
    m["option_groups"] =
        Json::array({Json{{"id", "outfit"},
                          {"name", "Outfit"},
                          {"default", "a"},
                          {"choices", Json::array({Json{{"id", "a"}, {"name", "A"}},
                                                   Json{{"id", "b"}, {"name", "B"}}})}}});
    m["component_rules"] = Json::array(
        {Json{{"target", 0},
              {"candidates", Json::array({Json{{"when", Json{{"eq", Json::array({"outfit", "a"})}}},
                                               {"operation", "replace"},
                                               {"mesh", 0}},
                                          Json{{"when", Json{{"eq", Json::array({"outfit", "b"})}}},
                                               {"operation", "keep"}}})}},
         Json{{"target", 1},
              {"candidates", Json::array({Json{{"when", true}, {"operation", "keep"}}})}}});
  }
  p.manifest = std::move(m);
  p.payloads = base_payloads();
  return p;
}

TestPackage make_valid_package_v14() {
  TestPackage p = make_valid_package(4);
  Json& m = p.manifest;
  m["required_capabilities"].push_back("multi-resource-targets");
  Json comps = base_target_components();
  for (auto& c : comps) {
    c["resource"] = "world";
    c["renderer_kind"] = "skinned";
  }
  comps[0]["renderer_path"] = "Mesh_all/lod0/body";
  comps[1]["renderer_path"] = "Mesh_all/lod0/hair";
  m["target"] =
      Json{{"kind", "character"},
           {"id", "chr_0013_aglina"},
           {"platform", "windows-x64"},
           {"profile_id", "aglina.windows"},
           {"revision", "20260918"},
           {"snapshot", "snapshot-1"},
           {"resources",
            Json::array({Json{{"id", "world"},
                              {"name", "chr_0013_aglina_postmodel"},
                              {"asset_path", "assets/characters/chr_0013_aglina_postmodel.prefab"},
                              {"platforms", Json::array({"windows-x64", "android-arm64"})},
                              {"lod", 0}}})},
           {"components", comps}};
  m["meshes"][0]["renderer_kind"] = "skinned";
  return p;
}

}  // namespace charkit::testkit
