// scene::GltfDocument on the sample models in tests/data/models and on
// glTF files built by hand (tests/support/glb_builder: not charkit's writer).
#include "charkit/scene/gltf_document.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "glb_builder.h"

namespace charkit::scene {
namespace {

namespace fs = std::filesystem;
using core::Json;

// Little-endian writers for hand-built buffers.
void put_f32(std::vector<std::uint8_t>& b, float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}
void put_u16(std::vector<std::uint8_t>& b, std::uint16_t u) {
  b.push_back(static_cast<std::uint8_t>(u));
  b.push_back(static_cast<std::uint8_t>(u >> 8));
}

// A glTF JSON document with one data: URI buffer holding bin.
std::vector<std::uint8_t> gltf_with(Json doc, const std::vector<std::uint8_t>& bin) {
  doc["asset"] = {{"version", "2.0"}};
  doc["buffers"] =
      Json::array({{{"byteLength", bin.size()}, {"uri", testkit::gltf_data_uri(bin)}}});
  const std::string text = doc.dump();
  return {text.begin(), text.end()};
}

// The same as a GLB with the buffer in the BIN chunk.
std::vector<std::uint8_t> glb_with(Json doc, const std::vector<std::uint8_t>& bin) {
  doc["asset"] = {{"version", "2.0"}};
  doc["buffers"] = Json::array({{{"byteLength", bin.size()}}});
  return testkit::build_glb(doc.dump(), bin);
}

GltfDocument load_ok(const std::vector<std::uint8_t>& bytes, const GltfLoadOptions& o = {}) {
  auto d = GltfDocument::load(bytes, o);
  EXPECT_TRUE(d) << d.error().to_string();
  if (!d) std::abort();
  return std::move(*d);
}

void expect_error(const core::Error& e, const char* code, const std::string& pointer) {
  EXPECT_EQ(e.code, code) << e.to_string();
  EXPECT_EQ(e.location.pointer, pointer) << e.to_string();
  EXPECT_FALSE(e.message.empty());
}

// --- The sample files ------------------------------------------------------

TEST(GltfDocument, ReadsEveryAccessorOfTheSampleModels) {
  std::size_t files = 0, positions = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(CHARKIT_TEST_DATA) / "models")) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".glb" && ext != ".vrm") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    auto doc = GltfDocument::load_file(entry.path().string());
    ASSERT_TRUE(doc) << doc.error().to_string();
    EXPECT_TRUE(doc->glb());
    ASSERT_GT(doc->asset().accessors.size(), 0u);
    for (std::size_t i = 0; i < doc->asset().accessors.size(); ++i) {
      auto info = doc->accessor(i);
      ASSERT_TRUE(info) << info.error().to_string();
      auto v = doc->read_accessor_floats(i);
      ASSERT_TRUE(v) << v.error().to_string();
      ASSERT_EQ(v->size(), info->count * info->components);
      // POSITION accessors must declare min and max (glTF 2.0 §3.7.2.1):
      // what we read has to agree with them.
      const Json& a = doc->json()["accessors"][i];
      if (!a.contains("min") || !a.contains("max") || info->type != "VEC3") continue;
      for (std::size_t c = 0; c < 3; ++c) {
        float lo = INFINITY, hi = -INFINITY;
        for (std::size_t e = 0; e < info->count; ++e) {
          lo = std::min(lo, (*v)[e * 3 + c]);
          hi = std::max(hi, (*v)[e * 3 + c]);
        }
        EXPECT_NEAR(lo, a["min"][c].get<double>(), 1e-4 * (1 + std::abs(lo))) << i;
        EXPECT_NEAR(hi, a["max"][c].get<double>(), 1e-4 * (1 + std::abs(hi))) << i;
      }
      ++positions;
    }
  }
  EXPECT_GE(files, 5u);
  EXPECT_GT(positions, 5u);
}

TEST(GltfDocument, KeepsTheJsonForExtensions) {
  auto doc = GltfDocument::load_file(std::string(CHARKIT_TEST_DATA) + "/models/sphere.vrm");
  ASSERT_TRUE(doc) << doc.error().to_string();
  const Json& ext = doc->json()["extensions"];
  EXPECT_TRUE(ext.contains("VRM") || ext.contains("VRMC_vrm"));
}

// --- Typed reading ------------------------------------------------------------

TEST(GltfDocument, ReadsAStridedInterleavedView) {
  // A VEC3 and a VEC2 of floats interleaved, 24-byte stride (4 bytes unused).
  std::vector<std::uint8_t> bin;
  for (int e = 0; e < 3; ++e) {
    for (int c = 0; c < 3; ++c) put_f32(bin, static_cast<float>(10 * e + c));
    put_f32(bin, -1.0F);  // the other attribute: u, v
    put_f32(bin, -2.0F);
    put_f32(bin, -3.0F);  // padding to 24 bytes
  }
  Json doc;
  doc["bufferViews"] = {{{"buffer", 0}, {"byteLength", bin.size()}, {"byteStride", 24}}};
  doc["accessors"] = {{{"bufferView", 0}, {"componentType", 5126}, {"count", 3}, {"type", "VEC3"}},
                      {{"bufferView", 0},
                       {"byteOffset", 12},
                       {"componentType", 5126},
                       {"count", 3},
                       {"type", "VEC2"}}};
  for (const auto& bytes : {gltf_with(doc, bin), glb_with(doc, bin)}) {
    GltfDocument d = load_ok(bytes);
    auto p = d.read_accessor_floats(0);
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_EQ(*p, (std::vector<float>{0, 1, 2, 10, 11, 12, 20, 21, 22}));
    auto uv = d.read_accessor_doubles(1);
    ASSERT_TRUE(uv);
    EXPECT_EQ(*uv, (std::vector<double>{-1, -2, -1, -2, -1, -2}));
  }
}

TEST(GltfDocument, NormalizedIntegersFollowSection3_11) {
  std::vector<std::uint8_t> bin = {0, 128, 255, 0x80, 0x81, 0x7F, 0, 0};  // u8 ×3, i8 ×3, pad
  put_u16(bin, 0);
  put_u16(bin, 65535);
  put_u16(bin, 0x8000);  // i16 -32768
  put_u16(bin, 0x7FFF);  // i16 32767
  Json doc;
  doc["bufferViews"] = {{{"buffer", 0}, {"byteLength", bin.size()}}};
  doc["accessors"] = {
      {{"bufferView", 0},
       {"componentType", 5121},
       {"normalized", true},
       {"count", 3},
       {"type", "SCALAR"}},
      {{"bufferView", 0},
       {"byteOffset", 3},
       {"componentType", 5120},
       {"normalized", true},
       {"count", 3},
       {"type", "SCALAR"}},
      {{"bufferView", 0},
       {"byteOffset", 8},
       {"componentType", 5123},
       {"normalized", true},
       {"count", 2},
       {"type", "SCALAR"}},
      {{"bufferView", 0},
       {"byteOffset", 12},
       {"componentType", 5122},
       {"normalized", true},
       {"count", 2},
       {"type", "SCALAR"}},
      {{"bufferView", 0}, {"componentType", 5121}, {"count", 3}, {"type", "SCALAR"}},
      {{"bufferView", 0},
       {"byteOffset", 3},
       {"componentType", 5120},
       {"count", 3},
       {"type", "SCALAR"}}};
  GltfDocument d = load_ok(gltf_with(doc, bin));
  EXPECT_EQ(*d.read_accessor_doubles(0), (std::vector<double>{0.0, 128.0 / 255.0, 1.0}));
  // Signed: max(c / 127, -1), so both -128 and -127 give -1.
  EXPECT_EQ(*d.read_accessor_doubles(1), (std::vector<double>{-1.0, -1.0, 1.0}));
  EXPECT_EQ(*d.read_accessor_doubles(2), (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(*d.read_accessor_doubles(3), (std::vector<double>{-1.0, 1.0}));
  // Not normalized: the integers themselves.
  EXPECT_EQ(*d.read_accessor_doubles(4), (std::vector<double>{0, 128, 255}));
  EXPECT_EQ(*d.read_accessor_doubles(5), (std::vector<double>{-128, -127, 127}));
  auto u = d.read_accessor_uints(4);
  ASSERT_TRUE(u);
  EXPECT_EQ(*u, (std::vector<std::uint32_t>{0, 128, 255}));
  // uints refuse normalized, signed and float accessors.
  expect_error(d.read_accessor_uints(0).error(), "GLTF_ACCESSOR", "/accessors/0/componentType");
  expect_error(d.read_accessor_uints(5).error(), "GLTF_ACCESSOR", "/accessors/5/componentType");
}

TEST(GltfDocument, MatrixColumnsStartOnFourByteBoundaries) {
  // MAT2 of UNSIGNED_BYTE: each 2-byte column padded to 4 (glTF 2.0 §3.6.2.4).
  const std::vector<std::uint8_t> bin = {1, 2, 0xEE, 0xEE, 3, 4, 0xEE, 0xEE,
                                         5, 6, 0xEE, 0xEE, 7, 8, 0xEE, 0xEE};
  Json doc;
  doc["bufferViews"] = {{{"buffer", 0}, {"byteLength", bin.size()}}};
  doc["accessors"] = {{{"bufferView", 0}, {"componentType", 5121}, {"count", 2}, {"type", "MAT2"}}};
  GltfDocument d = load_ok(glb_with(doc, bin));
  EXPECT_EQ(*d.read_accessor_uints(0), (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(GltfDocument, AppliesSparseSubstitutions) {
  std::vector<std::uint8_t> bin;
  for (int i = 0; i < 5; ++i) put_f32(bin, static_cast<float>(i));  // base: 0..4 (20 bytes)
  put_u16(bin, 1);                                                  // indices at 20
  put_u16(bin, 3);
  put_f32(bin, 100.0F);  // values at 24
  put_f32(bin, 300.0F);
  Json doc;
  doc["bufferViews"] = {{{"buffer", 0}, {"byteLength", 20}},
                        {{"buffer", 0}, {"byteOffset", 20}, {"byteLength", 4}},
                        {{"buffer", 0}, {"byteOffset", 24}, {"byteLength", 8}}};
  const Json sparse = {{"count", 2},
                       {"indices", {{"bufferView", 1}, {"componentType", 5123}}},
                       {"values", {{"bufferView", 2}}}};
  doc["accessors"] = {
      {{"bufferView", 0},
       {"componentType", 5126},
       {"count", 5},
       {"type", "SCALAR"},
       {"sparse", sparse}},
      // No bufferView: zeros, then the substitutions.
      {{"componentType", 5126}, {"count", 5}, {"type", "SCALAR"}, {"sparse", sparse}}};
  GltfDocument d = load_ok(gltf_with(doc, bin));
  EXPECT_EQ(*d.read_accessor_floats(0), (std::vector<float>{0, 100, 2, 300, 4}));
  EXPECT_EQ(*d.read_accessor_floats(1), (std::vector<float>{0, 100, 0, 300, 0}));
  EXPECT_TRUE(d.accessor(0)->sparse);

  // Indices that do not increase; a count above the accessor's; missing values.
  Json bad = doc;
  bad["bufferViews"][1]["byteOffset"] = 22;  // reads 3 then 0x0000 of the values: 3, 0
  bad["bufferViews"][1]["byteLength"] = 2;
  bad["accessors"][0]["sparse"]["count"] = 1;
  bad["accessors"][0]["sparse"]["indices"]["byteOffset"] = 0;
  {
    GltfDocument b = load_ok(gltf_with(bad, bin));
    EXPECT_EQ(*b.read_accessor_floats(0), (std::vector<float>{0, 1, 2, 100, 4}));
  }
  bad = doc;
  bad["bufferViews"][1]["byteOffset"] = 22;  // 3 then (values' first u16) 0
  bad["bufferViews"][1]["byteLength"] = 4;
  expect_error(load_ok(gltf_with(bad, bin)).read_accessor_floats(0).error(), "GLTF_SPARSE",
               "/accessors/0/sparse/indices");
  bad = doc;
  bad["accessors"][0]["sparse"]["count"] = 6;
  expect_error(load_ok(gltf_with(bad, bin)).read_accessor_floats(0).error(), "GLTF_SPARSE",
               "/accessors/0/sparse/count");
  bad = doc;
  bad["accessors"][0]["sparse"].erase("values");
  expect_error(load_ok(gltf_with(bad, bin)).read_accessor_floats(0).error(), "GLTF_SPARSE",
               "/accessors/0/sparse/values");
  bad = doc;
  bad["accessors"][0]["sparse"]["count"] = 3;  // 3 indices of 2 bytes in a 4-byte view
  expect_error(load_ok(gltf_with(bad, bin)).read_accessor_floats(0).error(), "GLTF_SPARSE",
               "/accessors/0/sparse/indices");
}

// --- Ranges and limits ------------------------------------------------------------

TEST(GltfDocument, RefusesAccessorsPastTheirData) {
  std::vector<std::uint8_t> bin;
  for (int i = 0; i < 4; ++i) put_f32(bin, 1.0F);
  Json doc;
  doc["bufferViews"] = {{{"buffer", 0}, {"byteLength", 16}}};
  doc["accessors"] = {{{"bufferView", 0},
                       {"byteOffset", 4},
                       {"componentType", 5126},
                       {"count", 4},
                       {"type", "SCALAR"}}};
  expect_error(load_ok(gltf_with(doc, bin)).read_accessor_floats(0).error(), "GLTF_ACCESSOR",
               "/accessors/0");
  // A huge declared count with a bufferView: refused by the range check.
  doc["accessors"][0]["byteOffset"] = 0;
  doc["accessors"][0]["count"] = 4294967295u;
  expect_error(load_ok(gltf_with(doc, bin)).read_accessor_floats(0).error(), "GLTF_ACCESSOR",
               "/accessors/0");
  // Without a bufferView (zeros) only the size cap bounds it.
  doc["accessors"][0].erase("bufferView");
  doc["accessors"][0]["type"] = "MAT4";
  expect_error(load_ok(gltf_with(doc, bin)).read_accessor_floats(0).error(), "GLTF_LIMIT",
               "/accessors/0/count");
  doc["accessors"][0]["type"] = "SCALAR";
  doc["accessors"][0]["count"] = 1000;
  EXPECT_EQ(*load_ok(gltf_with(doc, bin)).read_accessor_floats(0), std::vector<float>(1000, 0.0F));
  GltfLoadOptions tight;
  tight.max_zero_accessor_bytes = 3999;
  expect_error(load_ok(gltf_with(doc, bin), tight).read_accessor_floats(0).error(), "GLTF_LIMIT",
               "/accessors/0/count");
  // A view past its buffer.
  doc["accessors"][0] = {
      {"bufferView", 0}, {"componentType", 5126}, {"count", 1}, {"type", "SCALAR"}};
  doc["bufferViews"][0]["byteOffset"] = 8;
  expect_error(load_ok(gltf_with(doc, bin)).read_accessor_floats(0).error(), "GLTF_BUFFER_VIEW",
               "/bufferViews/0");
  // A stride below the element size.
  doc["bufferViews"][0] = {{"buffer", 0}, {"byteLength", 16}, {"byteStride", 4}};
  doc["accessors"][0]["type"] = "VEC2";
  expect_error(load_ok(gltf_with(doc, bin)).read_accessor_floats(0).error(), "GLTF_BUFFER_VIEW",
               "/bufferViews/0/byteStride");
  // Bad declarations: refused when the document loads.
  doc["accessors"][0] = {
      {"bufferView", 3}, {"componentType", 5126}, {"count", 1}, {"type", "SCALAR"}};
  expect_error(GltfDocument::load(gltf_with(doc, bin)).error(), "GLTF_ACCESSOR",
               "/accessors/0/bufferView");
  doc["accessors"][0] = {{"componentType", 5130}, {"count", 1}, {"type", "SCALAR"}};
  expect_error(GltfDocument::load(gltf_with(doc, bin)).error(), "GLTF_ACCESSOR",
               "/accessors/0/componentType");
  doc["accessors"][0] = {{"componentType", 5126}, {"count", 1}, {"type", "VEC5"}};
  expect_error(GltfDocument::load(gltf_with(doc, bin)).error(), "GLTF_ACCESSOR",
               "/accessors/0/type");
  doc["accessors"][0] = {
      {"componentType", 5126}, {"normalized", true}, {"count", 1}, {"type", "SCALAR"}};
  expect_error(GltfDocument::load(gltf_with(doc, bin)).error(), "GLTF_ACCESSOR",
               "/accessors/0/normalized");
  // An index past the accessors.
  doc["accessors"][0] = {{"componentType", 5126}, {"count", 1}, {"type", "SCALAR"}};
  expect_error(load_ok(gltf_with(doc, bin)).accessor(1).error(), "GLTF_ACCESSOR", "/accessors/1");
}

TEST(GltfDocument, ChecksBuffersAgainstTheirDeclaredLength) {
  std::vector<std::uint8_t> bin(8, 7);
  Json doc;
  doc["asset"] = {{"version", "2.0"}};
  // data: URI shorter than byteLength: refused before decoding.
  doc["buffers"] = {{{"byteLength", 9}, {"uri", testkit::gltf_data_uri(bin)}}};
  std::string t = doc.dump();
  expect_error(load_ok({t.begin(), t.end()}).buffer(0).error(), "GLTF_BUFFER",
               "/buffers/0/byteLength");
  // Bad base64, and a data: URI that is not base64.
  doc["buffers"] = {{{"byteLength", 3}, {"uri", "data:application/octet-stream;base64,AA!A"}}};
  t = doc.dump();
  auto e = load_ok({t.begin(), t.end()}).buffer(0).error();
  expect_error(e, "BASE64_CHARACTER", "/buffers/0/uri");
  EXPECT_NE(e.message.find("character 39 of the uri"), std::string::npos) << e.message;
  doc["buffers"] = {{{"byteLength", 3}, {"uri", "data:text/plain,abc"}}};
  t = doc.dump();
  expect_error(load_ok({t.begin(), t.end()}).buffer(0).error(), "GLTF_URI", "/buffers/0/uri");
  // GLB: buffer 0 longer than the BIN chunk; a buffer without uri that is not 0.
  Json g;
  g["asset"] = {{"version", "2.0"}};
  g["buffers"] = {{{"byteLength", 12}}, {{"byteLength", 1}}};
  const auto glb = testkit::build_glb(g.dump(), bin);
  GltfDocument gd = load_ok(glb);
  expect_error(gd.buffer(0).error(), "GLTF_BUFFER", "/buffers/0/byteLength");
  expect_error(gd.buffer(1).error(), "GLTF_BUFFER", "/buffers/1");
  expect_error(gd.buffer(2).error(), "GLTF_BUFFER", "/buffers/2");
  // The overall cap.
  GltfLoadOptions small;
  small.max_total_bytes = 64;
  Json big;
  big["asset"] = {{"version", "2.0"}};
  big["buffers"] = {
      {{"byteLength", 48}, {"uri", testkit::gltf_data_uri(std::vector<std::uint8_t>(48))}}};
  t = big.dump();
  auto capped = GltfDocument::load(core::as_bytes(t), small);
  ASSERT_FALSE(capped);
  EXPECT_EQ(capped.error().code, "GLTF_LIMIT");
  small.max_total_bytes = t.size() + 10;  // the JSON fits, its buffer does not
  auto loaded = GltfDocument::load(core::as_bytes(t), small);
  ASSERT_TRUE(loaded);
  expect_error(loaded->buffer(0).error(), "GLTF_LIMIT", "/buffers/0/uri");
}

TEST(GltfDocument, ReadsExternalBuffersNextToTheFileOnly) {
  const fs::path dir =
      fs::temp_directory_path() / ("charkit_gltf_doc_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::vector<std::uint8_t> bin;
  put_f32(bin, 1.5F);
  put_f32(bin, -2.5F);
  {
    std::ofstream(dir / "sub" / "data file.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(bin.data()), static_cast<std::streamsize>(bin.size()));
  }
  Json doc;
  doc["asset"] = {{"version", "2.0"}};
  doc["buffers"] = {{{"byteLength", 8}, {"uri", "sub/data%20file.bin"}}};
  doc["bufferViews"] = {{{"buffer", 0}, {"byteLength", 8}}};
  doc["accessors"] = {
      {{"bufferView", 0}, {"componentType", 5126}, {"count", 2}, {"type", "SCALAR"}}};
  const auto write = [&](const Json& j) {
    std::ofstream(dir / "model.gltf") << j.dump();
    return (dir / "model.gltf").string();
  };
  {
    auto d = GltfDocument::load_file(write(doc));
    ASSERT_TRUE(d) << d.error().to_string();
    auto v = d->read_accessor_floats(0);
    ASSERT_TRUE(v) << v.error().to_string();
    EXPECT_EQ(*v, (std::vector<float>{1.5F, -2.5F}));
  }
  // From bytes without a folder: refused, not read from the working directory.
  {
    const std::string t = doc.dump();
    expect_error(GltfDocument::load(core::as_bytes(t))->buffer(0).error(), "GLTF_URI_EXTERNAL",
                 "/buffers/0/uri");
  }
  // Absolute paths, ".." and schemes are refused whatever the folder.
  for (const char* uri :
       {"/etc/passwd", "..\\model.gltf", "sub/../../x.bin", "http://example.com/a.bin",
        "file:///etc/passwd", "C:/x.bin", "%2Fetc%2Fpasswd", ""}) {
    SCOPED_TRACE(uri);
    Json bad = doc;
    bad["buffers"][0]["uri"] = uri;
    auto d = GltfDocument::load_file(write(bad));
    ASSERT_TRUE(d);
    expect_error(d->read_accessor_floats(0).error(), "GLTF_URI_UNSAFE", "/buffers/0/uri");
  }
  // A file shorter than byteLength; a file that is not there.
  doc["buffers"][0]["byteLength"] = 12;
  expect_error(GltfDocument::load_file(write(doc))->buffer(0).error(), "GLTF_BUFFER",
               "/buffers/0/byteLength");
  doc["buffers"][0]["uri"] = "missing.bin";
  auto missing = GltfDocument::load_file(write(doc))->buffer(0);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code.rfind("IO_", 0), 0u) << missing.error().code;
  EXPECT_EQ(missing.error().location.pointer, "/buffers/0/uri");
  fs::remove_all(dir);
}

// --- The GLB container ----------------------------------------------------------

TEST(GltfDocument, RefusesBrokenGlbContainers) {
  Json doc;
  doc["asset"] = {{"version", "2.0"}};
  const std::vector<std::uint8_t> glb =
      testkit::build_glb(doc.dump(), std::vector<std::uint8_t>(8, 1));
  ASSERT_TRUE(GltfDocument::load(glb));
  const auto fails = [](std::vector<std::uint8_t> b, const char* code, std::uint64_t offset) {
    auto r = GltfDocument::load(b);
    ASSERT_FALSE(r) << code;
    EXPECT_EQ(r.error().code, code);
    EXPECT_EQ(r.error().location.offset, offset) << r.error().to_string();
  };
  // Truncated file: the header's length is past the end.
  fails({glb.begin(), glb.end() - 4}, "GLB_TRUNCATED", 8);
  // A BIN chunk whose length runs past the declared end.
  {
    auto b = glb;
    const std::size_t bin_at = b.size() - 8 - 8;
    b[bin_at] = 200;
    fails(b, "GLB_CHUNK_LENGTH", bin_at);
  }
  // Declared length cut inside the BIN chunk header.
  {
    auto b = glb;
    const std::uint32_t len = static_cast<std::uint32_t>(b.size() - 8 - 4);
    std::memcpy(b.data() + 8, &len, 4);
    b.resize(len);
    fails(b, "GLB_TRUNCATED", b.size() - 4);
  }
  {
    auto b = glb;
    b[4] = 1;
    fails(b, "GLB_VERSION", 4);
  }
  {
    auto b = glb;
    b[16] = 'X';
    fails(b, "GLB_CHUNK_TYPE", 16);
  }
  {
    auto b = glb;
    b[12] = 0xF0;  // JSON chunk length past the end
    fails(b, "GLB_CHUNK_LENGTH", 12);
  }
  fails({glb.begin(), glb.begin() + 10}, "GLB_TRUNCATED", 10);
  // Trailing bytes are a warning.
  auto b = glb;
  b.push_back(0);
  auto d = GltfDocument::load(b);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->warnings().size(), 1u);
  EXPECT_EQ(d->warnings()[0].code, "GLB_TRAILING_BYTES");
  // JSON errors carry their offset in the file.
  auto j = testkit::build_glb("{\"asset\":}", {});
  auto je = GltfDocument::load(j);
  ASSERT_FALSE(je);
  EXPECT_EQ(je.error().code, "JSON_SYNTAX");
  EXPECT_GE(je.error().location.offset.value_or(0), 20u);
  const std::string arr = "[1]";
  expect_error(GltfDocument::load(core::as_bytes(arr)).error(), "GLTF_NOT_OBJECT", "");
}

}  // namespace
}  // namespace charkit::scene
