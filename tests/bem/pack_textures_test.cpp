// `bem pack` textures: glTF images (PNG, DDS) packed into the template's
// textures, re-encoded in their formats (BC1-BC7, ASTC) or passed through.
#include "pack_test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/folder.h"
#include "charkit/bem/load.h"
#include "charkit/bem/pack.h"
#include "charkit/bem/pack_spec.h"
#include "charkit/bem/packed_tbn.h"
#include "charkit/bem/settings.h"
#include "charkit/bem/writer.h"
#include "charkit/core/base64.h"
#include "charkit/core/bytes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"
#include "morph_test_support.h"
#include "package_builder.h"

namespace charkit::bem {
namespace {

using namespace packtest;  // NOLINT(google-build-using-namespace): the tests' shared helpers

/// `glb` with image `index` replaced by `png` (a new buffer view at the end
/// of the buffer) and renamed `name` when not empty.
ByteVec with_image(const ByteVec& glb, std::size_t index, const ByteVec& png,
                   const std::string& name = "") {
  auto parts = glb_parts(glb);
  if (!parts) return {};
  Json& root = parts->root;
  ByteVec* bin = &parts->bin;
  while (bin->size() % 4 != 0) bin->push_back(0);
  const std::size_t offset = bin->size(), length = png.size();
  Json view = Json::object();
  view["buffer"] = 0;
  view["byteOffset"] = offset;
  view["byteLength"] = length;
  root["bufferViews"].push_back(std::move(view));
  bin->insert(bin->end(), png.begin(), png.end());
  root["images"][index]["bufferView"] = root["bufferViews"].size() - 1;
  if (!name.empty()) root["images"][index]["name"] = name;
  return glb_of(std::move(*parts));
}

/// The RGBA32 quad package: its export has the image of texture 0.
ByteVec load_template_file_for_images() {
  return quad_package().binary();
}

/// A w × h test image: r = 16x + 3, g = 16y + 5, b = 40, a = 255.
scene::RgbaImage test_image(std::uint32_t w, std::uint32_t h) {
  scene::RgbaImage img;
  img.width = w;
  img.height = h;
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      img.pixels.insert(img.pixels.end(), {static_cast<std::uint8_t>(16 * x + 3),
                                           static_cast<std::uint8_t>(16 * y + 5), 40, 255});
  return img;
}

// A changed image is encoded in the template texture's format: for RGBA32,
// the pixels with their rows back in Unity's order (bottom first) — or as
// stored with raw axes; the image bem export wrote keeps the payload.
TEST(BemPackTextures, ChangedImageBecomesTheTexturesPayload) {
  for (const bool raw : {false, true}) {
    SCOPED_TRACE(raw ? "raw axes" : "converted axes");
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
    const scene::RgbaImage img = test_image(4, 4);
    const ByteVec glb = with_image(export_default(t.file, raw), 0, *scene::encode_png(img));
    PackOptions o;
    o.raw_axes = raw;
    auto r = pack(t, glb, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->textures.size(), 1U);
    EXPECT_TRUE(r->textures[0].encoded);
    EXPECT_TRUE(std::isinf(r->textures[0].psnr_db));  // RGBA32: exact
    ByteVec want;
    for (std::uint32_t row = 0; row < 4; ++row) {
      const std::uint32_t y = raw ? row : 3 - row;
      for (std::uint32_t x = 0; x < 4; ++x)
        want.insert(want.end(), {static_cast<std::uint8_t>(16 * x + 3),
                                 static_cast<std::uint8_t>(16 * y + 5), 40, 255});
    }
    EXPECT_EQ(payload_at(r->content, "/textures/0/payload"), want);
    ASSERT_TRUE(write_binary(r->content).ok());
  }
  // An image whose own name is another: extras.original_name says which
  // texture it replaces.
  {
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
    ByteVec glb =
        with_image(export_default(t.file), 0, *scene::encode_png(test_image(4, 4)), "my_painting");
    auto parts = glb_parts(glb);
    ASSERT_TRUE(parts.has_value());
    parts->root["images"][0]["extras"] = Json{{"original_name", "T_actor_example_body_01_d"}};
    const ByteVec edited = glb_of(std::move(*parts));
    auto r = pack(t, edited);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->textures.size(), 1U);
    EXPECT_TRUE(r->textures[0].encoded);
    EXPECT_TRUE(r->warnings.empty());
  }
  // Unchanged: kept, not encoded.
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  auto kept = pack(t, export_default(t.file));
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->textures.size(), 1U);
  EXPECT_FALSE(kept->textures[0].encoded);
}

// A BC7 template texture takes a new 8 × 8 image (size and mips change):
// our encoder's blocks decode back close to it, and the package validates.
TEST(BemPackTextures, Bc7TextureTakesANewSizeWithMips) {
  testkit::TestPackage p = quad_package();
  scene::RgbaImage flat;
  flat.width = flat.height = 4;
  flat.pixels.assign(64, 0x80);
  p.manifest["textures"][0]["format"] = scene::texture_format::kBC7;
  p.payloads[4] = scene::encode_bc7(flat);
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  const scene::RgbaImage img = test_image(8, 8);
  t.content.manifest["textures"][0]["mips"] = 1;
  auto r = pack(t, with_image(export_default(t.file), 0, *scene::encode_png(img)));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1U);
  EXPECT_TRUE(r->textures[0].encoded);
  EXPECT_GT(r->textures[0].psnr_db, 35.0);
  const Json& tj = r->content.manifest["textures"][0];
  EXPECT_EQ(tj["width"], 8);
  EXPECT_EQ(tj["height"], 8);
  const ByteVec& payload = payload_at(r->content, "/textures/0/payload");
  EXPECT_EQ(payload.size(), 4U * 16U);  // one mip (the template had one): 2 × 2 blocks
  auto back = scene::decode_top_mip(scene::texture_format::kBC7, 8, 8, true, payload);
  ASSERT_TRUE(back.ok());
  // Row 0 of the payload is the image's bottom row (Unity order).
  EXPECT_NEAR(back->pixels[0], 3, 6);           // x = 0
  EXPECT_NEAR(back->pixels[1], 16 * 7 + 5, 6);  // y = 7
  ASSERT_TRUE(write_binary(r->content).ok());
}

// An ASTC 6×6 texture (libastcenc) takes a new 12 × 12 image with two
// mips: blocks of 6 × 6, decoded back close to the image.
TEST(BemPackTextures, AstcTextureIsEncoded) {
  testkit::TestPackage p = quad_package();
  p.manifest["textures"][0]["format"] = scene::texture_format::kASTC6x6;
  p.manifest["textures"][0]["mips"] = 1;
  p.payloads[4] = ByteVec(16, 0);  // one block (its content does not matter here)
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  const ByteVec base = export_default(load_template_file_for_images());
  const scene::RgbaImage img = test_image(12, 12);
  auto r = pack(t, with_image(base, 0, *scene::encode_png(img), "T_actor_example_body_01_d"));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1U);
  EXPECT_TRUE(r->textures[0].encoded);
  EXPECT_GT(r->textures[0].psnr_db, 25.0);  // four colours on a line for a 2-D gradient
  const ByteVec& payload = payload_at(r->content, "/textures/0/payload");
  EXPECT_EQ(payload.size(), 4U * 16U);  // 2 × 2 blocks of 6 × 6
  ASSERT_TRUE(write_binary(r->content).ok());
}

// Refusals: a BC format needs multiples of 4; an image that does not
// decode. Each names the image.
TEST(BemPackTextures, Refusals) {
  testkit::TestPackage p = quad_package();
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  const ByteVec glb = export_default(t.file);
  const std::string name = "T_actor_example_body_01_d";
  // Not decodable.
  auto bad = pack(t, with_image(glb, 0, ByteVec{1, 2, 3, 4}, name));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, codes::BEM_PACK_TEXTURE.str());
  EXPECT_EQ(bad.error().location.pointer, "/images/0");
  // BC7 at 6 × 6.
  testkit::TestPackage bc7 = quad_package();
  scene::RgbaImage flat;
  flat.width = flat.height = 4;
  flat.pixels.assign(64, 0x80);
  bc7.manifest["textures"][0]["format"] = scene::texture_format::kBC7;
  bc7.payloads[4] = scene::encode_bc7(flat);
  Template tb;
  ASSERT_NO_FATAL_FAILURE(load_template(tb, bc7.binary()));
  auto odd = pack(tb, with_image(export_default(tb.file), 0, *scene::encode_png(test_image(6, 6))));
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().code, codes::BEM_PACK_TEXTURE.str());
  EXPECT_NE(odd.error().message.find("multiple of 4"), std::string::npos) << odd.error().message;
}

/// A DX10 DDS file (header fields by hand, as in tests/scene/dds_test.cpp)
/// of a w × h texture in DXGI format `dxgi` with `data` after the headers.
ByteVec dds_file(std::uint32_t w, std::uint32_t h, std::uint32_t dxgi, const ByteVec& data) {
  ByteVec out = {'D', 'D', 'S', ' '};
  auto put32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  for (std::uint32_t v : {124u, 0x1007u, h, w, 0u, 0u, 1u}) put32(v);
  for (int i = 0; i < 11; ++i) put32(0);
  for (std::uint32_t v : {32u, 4u, 0x30315844u /* "DX10" */, 0u, 0u, 0u, 0u, 0u}) put32(v);
  for (std::uint32_t v : {0x1000u, 0u, 0u, 0u, 0u}) put32(v);
  for (std::uint32_t v : {dxgi, 3u, 0u, 1u, 0u}) put32(v);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// DDS images pass through: their data is the texture's payload byte for
// byte, their header gives format, size, mips and (DX10) colour space.
TEST(BemPackTextures, DdsImagesPassThroughUnchanged) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  // BC7 sRGB 8x8: four 16-byte blocks (any bytes: they are not decoded).
  ByteVec blocks;
  for (int i = 0; i < 64; ++i) blocks.push_back(static_cast<std::uint8_t>(i * 7));
  const ByteVec glb = with_image(export_default(t.file), 0, dds_file(8, 8, 99, blocks));
  auto r = pack(t, glb);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1u);
  EXPECT_TRUE(r->textures[0].dds);
  const Json& tj = r->content.manifest["textures"][0];
  EXPECT_EQ(tj["format"], 25);
  EXPECT_EQ(tj["width"], 8);
  EXPECT_EQ(tj["height"], 8);
  EXPECT_EQ(tj["mips"], 1);
  EXPECT_EQ(tj["srgb"], true);
  EXPECT_EQ(payload_at(r->content, "/textures/0/payload"), blocks);
  EXPECT_TRUE(r->warnings.empty());
  core::Report report;
  ASSERT_TRUE(write_binary(r->content, {}, &report).ok()) << report.to_text("packed");
  // A linear DXGI format for an sRGB texture: kept, with a warning.
  auto linear = pack(t, with_image(export_default(t.file), 0, dds_file(8, 8, 98, blocks)));
  ASSERT_TRUE(linear.ok());
  ASSERT_EQ(linear->warnings.size(), 1u);
  EXPECT_EQ(linear->warnings[0].code, "BEM_PACK_TEXTURE_SRGB");
  EXPECT_EQ(linear->content.manifest["textures"][0]["srgb"], false);
  // A DDS the packer cannot take: refused at the image.
  auto bad = pack(t, with_image(export_default(t.file), 0, dds_file(8, 8, 95, blocks)));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "BEM_PACK_TEXTURE");
  EXPECT_NE(bad.error().message.find("DXGI format 95"), std::string::npos);
}

// PNG into BC5 (a two-channel normal map) and BC4 (a mask) templates:
// libsquish's blocks, close to the image in the channels that hold data.
TEST(BemPackTextures, NormalMapsAndMasksAreBc5AndBc4) {
  for (const std::uint32_t format : {scene::texture_format::kBC5, scene::texture_format::kBC4}) {
    SCOPED_TRACE(scene::texture_format_name(format));
    testkit::TestPackage p = quad_package();
    scene::RgbaImage grey;
    grey.width = grey.height = 4;
    grey.pixels.assign(64, 128);
    Json& tex = p.manifest["textures"][0];
    tex["format"] = format;
    tex["srgb"] = false;
    if (format == scene::texture_format::kBC5) {
      tex["semantic"] = "normal";
      tex["normal_encoding"] = "xy-unorm";
    }
    p.payloads[4] = *scene::encode_texture(format, grey, 1, false);
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
    const ByteVec glb = with_image(export_default(t.file), 0, *scene::encode_png(test_image(8, 8)));
    auto r = pack(t, glb);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->textures.size(), 1u);
    EXPECT_TRUE(r->textures[0].encoded);
    EXPECT_EQ(r->content.manifest["textures"][0]["format"], format);
    EXPECT_EQ(r->content.manifest["textures"][0]["width"], 8);
    EXPECT_EQ(payload_at(r->content, "/textures/0/payload").size(),
              format == scene::texture_format::kBC5 ? 64u : 32u);  // 4 blocks of 16 / 8
    EXPECT_GT(r->textures[0].psnr_db, 35.0);
    ASSERT_TRUE(write_binary(r->content).ok());
  }
}

// --texture-format: an edited texture in another format than the
// template's (by its name here), the manifest's format following.
TEST(BemPackTextures, AFormatOverrideReencodesEditedTextures) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  const ByteVec glb = with_image(export_default(t.file), 0, *scene::encode_png(test_image(4, 4)));
  PackOptions o;
  o.texture_formats["T_actor_example_body_01_d"] = scene::texture_format::kBC1;
  auto r = pack(t, glb, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1U);
  EXPECT_EQ(r->textures[0].format, scene::texture_format::kBC1);
  EXPECT_EQ(r->content.manifest["textures"][0]["format"], 10);
  EXPECT_EQ(payload_at(r->content, "/textures/0/payload").size(), 8u);  // one BC1 block
  EXPECT_GT(r->textures[0].psnr_db, 25.0);  // four colours on a line for a 2-D gradient
  ASSERT_TRUE(write_binary(r->content).ok());
  // R8 cannot be sRGB (§8): refused, naming the texture.
  o.texture_formats.clear();
  o.texture_formats["color"] = scene::texture_format::kR8;
  r = pack(t, glb, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_TEXTURE");
  // A name that is neither a texture of the template nor a kind would be
  // ignored: refused, listing the template's texture names.
  o.texture_formats.clear();
  o.texture_formats["T_actor_example_body_01_D"] = scene::texture_format::kBC1;  // case differs
  r = pack(t, glb, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_TEXTURE_FORMAT");
  EXPECT_NE(r.error().message.find("\"T_actor_example_body_01_d\""), std::string::npos)
      << r.error().message;
  EXPECT_EQ(scene::texture_format_from_name("astc_6x6"), scene::texture_format::kASTC6x6);
  EXPECT_EQ(scene::texture_format_from_name("bc7"), scene::texture_format::kBC7);
  EXPECT_EQ(scene::texture_format_from_name("63"), scene::texture_format::kR8);
  EXPECT_EQ(scene::texture_format_from_name("BC6H"), std::nullopt);
}

}  // namespace
}  // namespace charkit::bem
