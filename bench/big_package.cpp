#include "big_package.h"

#include <cmath>
#include <cstring>

#include "charkit/core/json.h"
#include "package_builder.h"

namespace charkit::bench {
namespace {

using testkit::ByteVec;
using testkit::Json;

// Deterministic noise (xorshift64*): the same bytes on every run and machine.
struct Noise {
  std::uint64_t s;
  std::uint32_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return static_cast<std::uint32_t>((s * 0x2545F4914F6CDD1Dull) >> 32);
  }
  float unit() { return static_cast<float>(next() >> 8) / 16777216.0f; }  // [0, 1)
};

void put_f32(std::uint8_t*& p, float f) {
  std::memcpy(p, &f, 4);
  p += 4;
}
void put_u16(std::uint8_t*& p, std::uint16_t v) {
  std::memcpy(p, &v, 2);
  p += 2;
}

struct GridMesh {
  ByteVec positions, surface, skin;
  std::vector<ByteVec> draw_indices;
  std::uint32_t vertex_count = 0;
  std::vector<std::uint32_t> draw_counts;
};

// A rows×cols grid wrapped on a noisy cylinder: stream 0 Float32×3 position;
// stream 1 normal Float32×3, tangent Float32×4, uv Float32×2 (36 bytes);
// stream 2 UNorm16×4 weights + UInt8×4 indices (12 bytes, four bones).
GridMesh make_grid(std::uint32_t rows, std::uint32_t cols, std::uint32_t draws,
                   std::uint64_t seed) {
  GridMesh g;
  g.vertex_count = rows * cols;
  g.positions.resize(std::size_t{g.vertex_count} * 12);
  g.surface.resize(std::size_t{g.vertex_count} * 36);
  g.skin.resize(std::size_t{g.vertex_count} * 12);
  Noise n{seed};
  std::uint8_t* p = g.positions.data();
  std::uint8_t* s = g.surface.data();
  std::uint8_t* k = g.skin.data();
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t c = 0; c < cols; ++c) {
      float theta = 6.2831853f * static_cast<float>(c) / static_cast<float>(cols);
      float radius = 0.2f + 0.002f * n.unit();
      float ct = std::cos(theta), st = std::sin(theta);
      put_f32(p, radius * ct);
      put_f32(p, 1.6f * static_cast<float>(r) / static_cast<float>(rows));
      put_f32(p, radius * st);
      for (float f : {ct, 0.0f, st, -st, 0.0f, ct, 1.0f})  // normal, tangent
        put_f32(s, f);
      put_f32(s, static_cast<float>(c) / static_cast<float>(cols - 1));
      put_f32(s, static_cast<float>(r) / static_cast<float>(rows - 1));
      // Weights sum to exactly 65535 (§7: 1 ± 0.01).
      auto a = static_cast<std::uint16_t>(30000 + (r * 7 + c) % 8000);
      std::uint16_t b = 15000, d = 5000;
      auto e = static_cast<std::uint16_t>(65535 - a - b - d);
      for (std::uint16_t w : {a, b, d, e}) put_u16(k, w);
      for (std::uint8_t i = 0; i < 4; ++i) *k++ = i;
    }
  }
  // Triangles row band by row band, one index payload per draw.
  std::uint32_t band = (rows - 1 + draws - 1) / draws;
  for (std::uint32_t d = 0; d < draws; ++d) {
    std::uint32_t r0 = d * band, r1 = std::min(rows - 1, r0 + band);
    ByteVec idx;
    idx.reserve(std::size_t{r1 - r0} * (cols - 1) * 6 * 4);
    for (std::uint32_t r = r0; r < r1; ++r)
      for (std::uint32_t c = 0; c + 1 < cols; ++c) {
        std::uint32_t v = r * cols + c;
        for (std::uint32_t i : {v, v + cols, v + 1, v + 1, v + cols, v + cols + 1}) {
          for (int b = 0; b < 4; ++b) idx.push_back(static_cast<std::uint8_t>(i >> (8 * b)));
        }
      }
    g.draw_counts.push_back(static_cast<std::uint32_t>(idx.size() / 4));
    g.draw_indices.push_back(std::move(idx));
  }
  return g;
}

// RGBA32 with a full mip chain: gradients plus low-bit noise.
ByteVec rgba_texture(std::uint32_t size, std::uint32_t mips, std::uint64_t seed) {
  ByteVec out;
  Noise n{seed};
  for (std::uint32_t l = 0; l < mips; ++l) {
    std::uint32_t w = std::max(1u, size >> l);
    for (std::uint32_t y = 0; y < w; ++y)
      for (std::uint32_t x = 0; x < w; ++x) {
        std::uint32_t noise = n.next();
        out.push_back(static_cast<std::uint8_t>((x * 255 / w) ^ (noise & 7)));
        out.push_back(static_cast<std::uint8_t>((y * 255 / w) ^ ((noise >> 3) & 7)));
        out.push_back(static_cast<std::uint8_t>(128 + ((noise >> 6) & 15)));
        out.push_back(255);
      }
  }
  return out;
}

// BC7-like blocks (16 bytes per 4×4 block) down to the 4×4 level: half of
// each block repeats its neighbours, half is noise, as real BC7 roughly does.
ByteVec bc7_texture(std::uint32_t size, std::uint32_t mips, std::uint64_t seed) {
  ByteVec out;
  Noise n{seed};
  for (std::uint32_t l = 0; l < mips; ++l) {
    std::uint32_t blocks = (size >> l) / 4;
    for (std::uint64_t b = 0; b < std::uint64_t{blocks} * blocks; ++b) {
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(0x40 + (b >> 6) % 4 + i));
      for (int i = 0; i < 2; ++i) {
        std::uint32_t v = n.next();
        for (int j = 0; j < 4; ++j) out.push_back(static_cast<std::uint8_t>(v >> (8 * j)));
      }
    }
  }
  return out;
}

Json mesh_json(const GridMesh& g, std::uint32_t first_payload, std::uint32_t component,
               const Json& bone_names, const Json& material,
               const std::vector<std::uint32_t>& textures) {
  Json bones = Json::array();
  for (std::uint32_t i = 0; i < 4; ++i)
    bones.push_back(Json{{"component", component}, {"index", i}, {"name", bone_names[i]}});
  Json draws = Json::array();
  for (std::size_t d = 0; d < g.draw_counts.size(); ++d)
    draws.push_back(Json{{"when", true},
                         {"indices", first_payload + 3 + d},
                         {"count", g.draw_counts[d]},
                         {"material_component", component},
                         {"material_slot", 0},
                         {"material_name", material},
                         {"textures", textures}});
  return Json{
      {"vertex_count", g.vertex_count},
      {"index_size", 4},
      {"streams", Json::array({Json{{"stride", 12}, {"payload", first_payload}},
                               Json{{"stride", 36}, {"payload", first_payload + 1}},
                               Json{{"stride", 12}, {"payload", first_payload + 2}}})},
      {"attributes", Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 3, 1, 0}),
                                  Json::array({2, 0, 4, 1, 12}), Json::array({4, 0, 2, 1, 28}),
                                  Json::array({12, 4, 4, 2, 0}), Json::array({13, 6, 4, 2, 8})})},
      {"bones", bones},
      {"draws", draws}};
}

}  // namespace

BigPackage make_big_package() {
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json& m = p.manifest;
  m["package_id"] = "charkit.bench.big";
  Json& comps = m["target"]["components"];
  comps[0]["bone_names"] =
      Json::array({"Bip001_Pelvis", "Bip001_Spine", "Bip001_Spine1", "Bip001_Neck"});
  comps[1]["bone_names"] =
      Json::array({"Bip001_Head", "Bip001_Hair_01", "Bip001_Hair_02", "Bip001_Hair_03"});

  GridMesh body = make_grid(1024, 1024, 2, 1);  // 1 Mi vertices, two draws
  GridMesh hair = make_grid(512, 1024, 1, 2);   // 512 Ki vertices, one draw
  std::vector<ByteVec> payloads;
  for (GridMesh* g : {&body, &hair}) {
    payloads.push_back(std::move(g->positions));
    payloads.push_back(std::move(g->surface));
    payloads.push_back(std::move(g->skin));
    for (auto& idx : g->draw_indices) payloads.push_back(std::move(idx));
  }
  // Textures follow the mesh payloads (body 0..4, hair 5..8).
  auto first_texture = static_cast<std::uint32_t>(payloads.size());
  Json textures = Json::array();
  const char* names[] = {"T_body_d", "T_body_n", "T_hair_d", "T_hair_n", "T_body_m", "T_hair_m"};
  for (std::uint32_t t = 0; t < 6; ++t) {
    bool bc7 = t >= 4;
    std::uint32_t size = bc7 ? 4096 : 2048, mips = bc7 ? 11 : 12;
    payloads.push_back(bc7 ? bc7_texture(size, mips, 10 + t) : rgba_texture(size, mips, 10 + t));
    textures.push_back(Json{{"width", size},
                            {"height", size},
                            {"mips", mips},
                            {"format", bc7 ? 25 : 4},
                            {"srgb", t % 2 == 0 && !bc7},
                            {"original_name", names[t]},
                            {"payload", first_texture + t}});
  }
  m["textures"] = textures;
  m["meshes"] = Json::array(
      {mesh_json(body, 0, 0, comps[0]["bone_names"], "M_actor_example_body_01", {0, 1, 4}),
       mesh_json(hair, 5, 1, comps[1]["bone_names"], "M_actor_example_hair_01", {2, 3, 5})});
  m["component_rules"][1]["candidates"] =
      Json::array({Json{{"when", true}, {"operation", "replace"}, {"mesh", 1}}});

  BigPackage out;
  testkit::BinaryLayout l;
  l.minor = 5;
  l.manifest = m.dump();
  for (auto& b : payloads) {
    out.decoded_total += b.size();
    if (b.size() > out.largest_decoded) {
      out.second_largest_decoded = out.largest_decoded;
      out.largest_decoded = b.size();
    } else {
      out.second_largest_decoded = std::max<std::uint64_t>(out.second_largest_decoded, b.size());
    }
    l.payloads.push_back({std::move(b), true});
  }
  out.file = testkit::build_binary(l);
  return out;
}

}  // namespace charkit::bench
