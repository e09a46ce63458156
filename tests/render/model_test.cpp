// Loading models for the passes (render/model.h) on the test models, the
// parts mapping file, and the .cube LUT reader (render/lut.h).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/render/error_codes.h"
#include "charkit/render/lut.h"
#include "charkit/render/model.h"
#include "charkit/render/shading.h"

#include "glb_builder.h"

namespace charkit::render {
namespace {

std::string model_path(const char* name) {
  return (std::filesystem::path(CHARKIT_TEST_DATA) / "models" / name).string();
}

/// A GLB's JSON (parsed) and binary chunk, to edit and rebuild.
struct Glb {
  core::Json json;
  std::vector<std::uint8_t> bin;
};
Glb read_glb(const std::string& path) {
  Glb g;
  auto file = core::MappedFile::open(path);
  if (!file) return g;
  auto chunks = scene::split_glb(file->bytes());
  if (!chunks) return g;
  auto json = core::parse_json_strict(core::as_chars(chunks->json));
  if (!json) return g;
  g.json = std::move(*json);
  if (chunks->bin) g.bin.assign(chunks->bin->begin(), chunks->bin->end());
  return g;
}

core::Bytes text(const std::string& s) {
  return core::Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

TEST(RenderModel, GodettePartsTexturesAndBounds) {
  auto doc = scene::GltfDocument::load_file(model_path("Godette_vrm_v4.vrm"));
  ASSERT_TRUE(doc);
  auto m = load_render_model(*doc);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->primitives.size(), 4U);
  EXPECT_EQ(m->facing_z, -1.0F);  // VRM 0.x
  EXPECT_EQ(m->primitives[0].material_name, "Face");
  EXPECT_EQ(m->primitives[0].kind, PartKind::kFace);
  // FaceMesh is skinned mostly to node 5, the VRM humanoid head (weights
  // summed per joint with a separate script); the body's primitives to the
  // hips, which decides nothing.
  EXPECT_EQ(m->primitives[0].kind_reason, "VRM humanoid bone head");
  EXPECT_EQ(m->primitives[1].kind, PartKind::kBody);
  EXPECT_EQ(m->primitives[2].material_name, "GodotLogo");
  EXPECT_EQ(m->primitives[2].kind, PartKind::kTransparent);  // alphaMode BLEND
  EXPECT_TRUE(m->primitives[0].base_texture.has_value());
  ASSERT_FALSE(m->images.empty());
  EXPECT_GT(m->images[*m->primitives[0].base_texture].width, 0U);
  // A standing character about 1.4 m tall with its feet near y = 0.
  EXPECT_NEAR(m->min[1], 0.0F, 0.1F);
  EXPECT_GT(m->max[1] - m->min[1], 1.0F);
  EXPECT_LT(m->max[1] - m->min[1], 2.0F);
  for (const RenderPrimitive& p : m->primitives)
    for (const RenderVertex& v : p.vertices) {
      const float len = std::sqrt(v.normal[0] * v.normal[0] + v.normal[1] * v.normal[1] +
                                  v.normal[2] * v.normal[2]);
      ASSERT_NEAR(len, 1.0F, 1e-3F) << p.pointer;
    }
}

// debug_robot.vrm (VRM 1.0) hangs one three-primitive mesh on 22 nodes,
// none skinned: Eye.L under the humanoid leftEye bone, Eye.R under
// rightEye, Head under head (read from the file's JSON with a separate
// script). Without a parts file those become eye, eye and face.
TEST(RenderModel, HumanoidBonesFindFaceAndEyes) {
  auto doc = scene::GltfDocument::load_file(model_path("debug_robot.vrm"));
  ASSERT_TRUE(doc);
  auto m = load_render_model(*doc);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_EQ(m->primitives.size(), 66U);
  std::map<std::string, int> reasons;
  int eyes = 0, faces = 0;
  for (const RenderPrimitive& p : m->primitives) {
    eyes += p.kind == PartKind::kEye ? 1 : 0;
    faces += p.kind == PartKind::kFace ? 1 : 0;
    ++reasons[p.kind_reason];
  }
  EXPECT_EQ(eyes, 6);
  EXPECT_EQ(faces, 3);
  EXPECT_EQ(reasons["VRM humanoid bone leftEye"], 3);
  EXPECT_EQ(reasons["VRM humanoid bone rightEye"], 3);
  EXPECT_EQ(reasons["VRM humanoid bone head"], 3);
  // A plain glTF has no humanoid bones: CesiumMan's parts come from names
  // and defaults only.
  auto cesium = scene::GltfDocument::load_file(model_path("CesiumMan.glb"));
  ASSERT_TRUE(cesium);
  auto c = load_render_model(*cesium);
  ASSERT_TRUE(c) << c.error().message;
  for (const RenderPrimitive& p : c->primitives)
    EXPECT_EQ(p.kind_reason.rfind("VRM humanoid", 0), std::string::npos) << p.kind_reason;
}

// Godette (VRM 0.x) drives 15 morph targets of its face mesh through 17
// blend shape groups; its file gives no default weights. At rest nothing
// moves; blink=1 moves exactly the face vertices whose blink-bound targets
// have a non-zero position delta (the binds and deltas read from the file
// here), and nothing of the body.
TEST(RenderModel, VrmExpressionsDriveTheirMorphTargets) {
  auto doc = scene::GltfDocument::load_file(model_path("Godette_vrm_v4.vrm"));
  ASSERT_TRUE(doc);
  auto rest = load_render_model(*doc);
  ASSERT_TRUE(rest) << rest.error().message;
  EXPECT_EQ(rest->expressions.size(), 17U);
  ModelLoadOptions o;
  o.expressions = {{"blink", 1.0}};
  auto blink = load_render_model(*doc, o);
  ASSERT_TRUE(blink) << blink.error().message;

  const scene::GltfAsset& a = doc->asset();
  const scene::VrmExpression* e = nullptr;
  for (const scene::VrmExpression& x : a.vrm->expressions)
    if (x.name == "blink") e = &x;
  ASSERT_NE(e, nullptr);
  ASSERT_FALSE(e->binds.empty());
  const scene::GltfPrimitive& face = a.meshes[e->binds[0].mesh].primitives[0];
  std::vector<bool> should_move;
  for (const scene::VrmMorphBind& b : e->binds) {
    auto d = doc->read_accessor_floats(*face.targets[b.target].find("POSITION"));
    ASSERT_TRUE(d);
    should_move.resize(d->size() / 3, false);
    for (std::size_t v = 0; v < d->size() / 3; ++v)
      if (b.weight != 0 && ((*d)[3 * v] != 0 || (*d)[3 * v + 1] != 0 || (*d)[3 * v + 2] != 0))
        should_move[v] = true;
  }
  ASSERT_EQ(blink->primitives.size(), rest->primitives.size());
  const RenderPrimitive& p0 = rest->primitives[0];  // the face (see above)
  const RenderPrimitive& p1 = blink->primitives[0];
  ASSERT_EQ(p1.vertices.size(), should_move.size());
  std::size_t moved = 0, expected = 0;
  for (std::size_t v = 0; v < p1.vertices.size(); ++v) {
    const float* x = p0.vertices[v].position;
    const float* y = p1.vertices[v].position;
    const bool m = x[0] != y[0] || x[1] != y[1] || x[2] != y[2];
    EXPECT_EQ(m, static_cast<bool>(should_move[v])) << v;
    moved += m ? 1 : 0;
    expected += should_move[v] ? 1 : 0;
  }
  EXPECT_GT(expected, 0U);
  EXPECT_EQ(moved, expected);
  for (std::size_t p = 1; p < rest->primitives.size(); ++p)
    for (std::size_t v = 0; v < rest->primitives[p].vertices.size(); ++v)
      ASSERT_EQ(std::vector<float>(rest->primitives[p].vertices[v].position,
                                   rest->primitives[p].vertices[v].position + 3),
                std::vector<float>(blink->primitives[p].vertices[v].position,
                                   blink->primitives[p].vertices[v].position + 3));

  // A name the model lacks, or a weight outside 0–1, is refused.
  o.expressions = {{"smirk", 1.0}};
  auto bad = load_render_model(*doc, o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "RENDER_EXPRESSION");
  EXPECT_NE(bad.error().message.find("blinkLeft"), std::string::npos) << bad.error().message;
  o.expressions = {{"blink", 1.5}};
  EXPECT_FALSE(load_render_model(*doc, o));
}

// Without the head bone in its humanoid, Godette's face is found by the
// expression that moves it: its blink targets move the face primitive (the
// binds and deltas the previous test reads), not the body's.
TEST(RenderModel, BlinkExpressionFindsTheFace) {
  Glb glb_in = read_glb(model_path("Godette_vrm_v4.vrm"));
  ASSERT_TRUE(glb_in.json.is_object());
  core::Json& json = glb_in.json;
  core::Json& bones = json["extensions"]["VRM"]["humanoid"]["humanBones"];
  const auto before = bones.size();
  for (std::size_t i = bones.size(); i-- > 0;)
    if (bones[i]["bone"] == "head") bones.erase(i);
  ASSERT_EQ(bones.size(), before - 1);
  const auto glb = testkit::build_glb(json.dump(), glb_in.bin);
  auto doc = scene::GltfDocument::load(core::Bytes(glb.data(), glb.size()));
  ASSERT_TRUE(doc) << doc.error().to_string();
  auto m = load_render_model(*doc);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->primitives[0].kind, PartKind::kFace);
  EXPECT_EQ(m->primitives[0].kind_reason, "VRM expression blink");
  for (std::size_t p = 1; p < m->primitives.size(); ++p)
    EXPECT_EQ(m->primitives[p].kind_reason.rfind("VRM expression", 0), std::string::npos)
        << m->primitives[p].material_name;
}

double srgb_to_linear_reference(double c) {
  return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

// VRM 0.x MToon (Godette): the shading edges, shade colour and shade texture
// from each material's properties, read here from the file's own JSON.
TEST(RenderModel, Vrm0MToonShading) {
  Glb glb_in = read_glb(model_path("Godette_vrm_v4.vrm"));
  ASSERT_TRUE(glb_in.json.is_object());
  core::Json& json = glb_in.json;
  std::map<std::string, core::Json> props;
  for (const core::Json& m : json["extensions"]["VRM"]["materialProperties"])
    props[m["name"].get<std::string>()] = m;
  auto doc = scene::GltfDocument::load_file(model_path("Godette_vrm_v4.vrm"));
  ASSERT_TRUE(doc);
  auto m = load_render_model(*doc);
  ASSERT_TRUE(m) << m.error().message;
  int mtoon = 0, plain = 0;
  for (const RenderPrimitive& p : m->primitives) {
    const core::Json& mp = props.at(p.material_name);
    if (mp["shader"] != "VRM/MToon") {
      EXPECT_FALSE(p.mtoon) << p.material_name;
      ++plain;
      continue;
    }
    ASSERT_TRUE(p.mtoon) << p.material_name;
    ++mtoon;
    EXPECT_EQ(p.mtoon->source, "VRM 0.x MToon");
    const double shift = mp["floatProperties"]["_ShadeShift"].get<double>();
    const double toony = mp["floatProperties"]["_ShadeToony"].get<double>();
    EXPECT_FLOAT_EQ(p.mtoon->shade_from, static_cast<float>(shift));
    EXPECT_FLOAT_EQ(p.mtoon->shade_to, static_cast<float>(1.0 + (shift - 1.0) * toony));
    for (std::size_t c = 0; c < 3; ++c)
      EXPECT_FLOAT_EQ(p.mtoon->shade_colour[c],
                      static_cast<float>(srgb_to_linear_reference(
                          mp["vectorProperties"]["_ShadeColor"][c].get<double>())));
    EXPECT_EQ(p.mtoon->shade_texture.has_value(),
              mp["textureProperties"].contains("_ShadeTexture"));
    EXPECT_FLOAT_EQ(p.mtoon->rim_fresnel_power,
                    mp["floatProperties"]["_RimFresnelPower"].get<float>());
    EXPECT_FLOAT_EQ(p.mtoon->rim_lighting_mix,
                    mp["floatProperties"]["_RimLightingMix"].get<float>());
    for (std::size_t c = 0; c < 3; ++c)
      EXPECT_FLOAT_EQ(p.mtoon->rim_colour[c],
                      static_cast<float>(srgb_to_linear_reference(
                          mp["vectorProperties"]["_RimColor"][c].get<double>())));
    // The outline as three-vrm ports it: mode 2 is screen coordinates, the
    // width in centimetres, the colour sRGB, the lighting mix in colour
    // mode 1 ("mixed lighting"). Godette's Face and Body have outlines.
    const core::Json& fp = mp["floatProperties"];
    ASSERT_EQ(fp["_OutlineWidthMode"].get<double>(), 2.0) << p.material_name;
    EXPECT_EQ(p.mtoon->outline_mode, MToonShading::OutlineMode::kScreen);
    EXPECT_TRUE(p.mtoon->has_outline());
    EXPECT_FLOAT_EQ(p.mtoon->outline_width,
                    static_cast<float>(fp["_OutlineWidth"].get<double>() / 100.0));
    ASSERT_EQ(fp["_OutlineColorMode"].get<double>(), 1.0);
    EXPECT_FLOAT_EQ(p.mtoon->outline_lighting_mix, fp["_OutlineLightingMix"].get<float>());
    for (std::size_t c = 0; c < 3; ++c)
      EXPECT_FLOAT_EQ(p.mtoon->outline_colour[c],
                      static_cast<float>(srgb_to_linear_reference(
                          mp["vectorProperties"]["_OutlineColor"][c].get<double>())));
    EXPECT_FALSE(p.mtoon->outline_width_texture);
    EXPECT_FALSE(p.mtoon->uv_animated());
  }
  EXPECT_GT(mtoon, 0);
  EXPECT_GT(plain, 0);  // the logo keeps charkit's own shading
}

// VRMC_materials_mtoon 1.0: the edges are −1 + toony − shift and
// 1 − toony − shift; the rim light's parameters and defaults; the emissive
// factor with its texture.
TEST(RenderModel, Vrm1MToonShading) {
  Glb glb_in = read_glb(model_path("debug_robot.vrm"));
  ASSERT_TRUE(glb_in.json.is_object());
  core::Json& json = glb_in.json;
  core::Json& mats = json["materials"];
  ASSERT_GE(mats.size(), 3U);
  mats[0]["extensions"]["VRMC_materials_mtoon"] = {
      {"specVersion", "1.0"},
      {"shadeColorFactor", {0.2, 0.3, 0.4}},
      {"shadingShiftFactor", -0.1},
      {"shadingToonyFactor", 0.6},
      {"parametricRimColorFactor", {0.7, 0.0, 0.1}},
      {"parametricRimFresnelPowerFactor", 2.5},
      {"parametricRimLiftFactor", 0.25},
      {"rimLightingMixFactor", 0.5},
      {"matcapFactor", {0.1, 0.2, 0.3}},
      {"matcapTexture", {{"index", 1}}},
      {"shadingShiftTexture", {{"index", 2}, {"scale", 0.75}}},
      {"outlineWidthMode", "worldCoordinates"},
      {"outlineWidthFactor", 0.02},
      {"outlineWidthMultiplyTexture", {{"index", 1}}},
      {"outlineColorFactor", {0.3, 0.2, 0.1}},
      {"outlineLightingMixFactor", 0.4},
      {"uvAnimationScrollXSpeedFactor", 0.5},
      {"uvAnimationScrollYSpeedFactor", -0.25},
      {"uvAnimationRotationSpeedFactor", 1.5},
      {"uvAnimationMaskTexture", {{"index", 2}}}};
  mats[0]["emissiveFactor"] = {0.05, 0.0, 0.5};
  mats[1]["extensions"]["VRMC_materials_mtoon"] = {{"specVersion", "1.0"}};
  mats[1]["emissiveFactor"] = {1.0, 1.0, 1.0};
  mats[1]["emissiveTexture"] = {{"index", 0}};
  json["extensionsUsed"].push_back("VRMC_materials_mtoon");
  ASSERT_FALSE(json["textures"].empty());
  const auto glb = testkit::build_glb(json.dump(), glb_in.bin);
  auto doc = scene::GltfDocument::load(core::Bytes(glb.data(), glb.size()));
  ASSERT_TRUE(doc) << doc.error().to_string();
  auto m = load_render_model(*doc);
  ASSERT_TRUE(m) << m.error().message;
  const std::string first = mats[0]["name"], second = mats[1]["name"], third = mats[2]["name"];
  int seen[3] = {0, 0, 0};
  for (const RenderPrimitive& p : m->primitives) {
    if (p.material_name == first) {
      ASSERT_TRUE(p.mtoon);
      EXPECT_EQ(p.mtoon->source, "VRMC_materials_mtoon");
      EXPECT_FLOAT_EQ(p.mtoon->shade_from, -1.0F + 0.6F + 0.1F);
      EXPECT_FLOAT_EQ(p.mtoon->shade_to, 1.0F - 0.6F + 0.1F);
      EXPECT_EQ(p.mtoon->shade_colour, (core::Vec3f{0.2F, 0.3F, 0.4F}));
      EXPECT_EQ(p.mtoon->emissive, (core::Vec3f{0.05F, 0.0F, 0.5F}));
      EXPECT_FALSE(p.mtoon->emissive_texture);
      EXPECT_FALSE(p.mtoon->shade_texture);
      EXPECT_EQ(p.mtoon->rim_colour, (core::Vec3f{0.7F, 0.0F, 0.1F}));
      EXPECT_FLOAT_EQ(p.mtoon->rim_fresnel_power, 2.5F);
      EXPECT_FLOAT_EQ(p.mtoon->rim_lift, 0.25F);
      EXPECT_FLOAT_EQ(p.mtoon->rim_lighting_mix, 0.5F);
      EXPECT_EQ(p.mtoon->matcap_colour, (core::Vec3f{0.1F, 0.2F, 0.3F}));
      EXPECT_TRUE(p.mtoon->matcap_texture);
      EXPECT_TRUE(p.mtoon->shift_texture);
      EXPECT_FLOAT_EQ(p.mtoon->shift_scale, 0.75F);
      EXPECT_EQ(p.mtoon->outline_mode, MToonShading::OutlineMode::kWorld);
      EXPECT_FLOAT_EQ(p.mtoon->outline_width, 0.02F);
      EXPECT_TRUE(p.mtoon->outline_width_texture);
      EXPECT_EQ(p.mtoon->outline_colour, (core::Vec3f{0.3F, 0.2F, 0.1F}));  // linear as given
      EXPECT_FLOAT_EQ(p.mtoon->outline_lighting_mix, 0.4F);
      EXPECT_FLOAT_EQ(p.mtoon->uv_scroll_x, 0.5F);
      EXPECT_FLOAT_EQ(p.mtoon->uv_scroll_y, -0.25F);  // 1.0's v points down, as glTF's
      EXPECT_FLOAT_EQ(p.mtoon->uv_rotation, 1.5F);
      EXPECT_TRUE(p.mtoon->uv_mask_texture);
      ++seen[0];
    } else if (p.material_name == second) {
      ASSERT_TRUE(p.mtoon);  // the extension's defaults: shift 0, toony 0.9, rim off
      EXPECT_NEAR(p.mtoon->shade_from, -0.1F, 1e-6F);
      EXPECT_NEAR(p.mtoon->shade_to, 0.1F, 1e-6F);
      EXPECT_EQ(p.mtoon->emissive, (core::Vec3f{1, 1, 1}));
      EXPECT_TRUE(p.mtoon->emissive_texture);  // the factor times the texture
      EXPECT_EQ(p.mtoon->rim_colour, (core::Vec3f{0, 0, 0}));
      EXPECT_FLOAT_EQ(p.mtoon->rim_fresnel_power, 5.0F);
      EXPECT_FLOAT_EQ(p.mtoon->rim_lighting_mix, 1.0F);
      EXPECT_FALSE(p.mtoon->has_outline());  // outlineWidthMode "none" by default
      EXPECT_FLOAT_EQ(p.mtoon->outline_lighting_mix, 1.0F);
      EXPECT_FALSE(p.mtoon->uv_animated());
      ++seen[1];
    } else {
      EXPECT_EQ(p.material_name, third);
      EXPECT_FALSE(p.mtoon);
      ++seen[2];
    }
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
  EXPECT_GT(seen[2], 0);
}

TEST(RenderModel, PartsFileOverridesAndErrors) {
  auto parts = parse_parts(text(R"({"eye": ["Blue"], "face": ["Red"], "body": ["Green"]})"));
  ASSERT_TRUE(parts) << parts.error().message;
  auto doc = scene::GltfDocument::load_file(model_path("debug_robot.vrm"));
  ASSERT_TRUE(doc);
  ModelLoadOptions o;
  o.parts = *parts;
  auto m = load_render_model(*doc, o);
  ASSERT_TRUE(m) << m.error().message;
  int eyes = 0, faces = 0;
  for (const RenderPrimitive& p : m->primitives) {
    EXPECT_EQ(p.kind_reason, "parts file") << p.material_name;
    eyes += p.kind == PartKind::kEye ? 1 : 0;
    faces += p.kind == PartKind::kFace ? 1 : 0;
  }
  // The robot's one mesh (red, green, blue primitives) hangs under many
  // nodes: as many eye parts as face parts, each drawn where its node is.
  EXPECT_GT(eyes, 0);
  EXPECT_EQ(eyes, faces);
  EXPECT_EQ(m->primitives.size(), static_cast<std::size_t>(3 * eyes));
  EXPECT_EQ(m->facing_z, 1.0F);  // VRM 1.0 faces +Z
  for (const char* bad : {"[1]", R"({"hair": ["X"]})", R"({"face": "X"})", R"({"face": [3]})"}) {
    auto r = parse_parts(text(bad));
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, codes::RENDER_PARTS.str()) << bad;
  }
  EXPECT_FALSE(parse_parts(text("{")));  // JSON syntax
}

TEST(RenderModel, RefusesWhatItCannotDraw) {
  const std::string empty = R"({"asset": {"version": "2.0"}})";
  auto doc = scene::GltfDocument::load(text(empty));
  ASSERT_TRUE(doc);
  auto m = load_render_model(*doc);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, codes::RENDER_MODEL.str());
  // A mesh node whose primitive lacks POSITION: the pointer names it.
  const std::string no_position =
      R"({"asset": {"version": "2.0"}, "nodes": [{"mesh": 0}],
          "meshes": [{"primitives": [{"attributes": {}}]}]})";
  auto doc2 = scene::GltfDocument::load(text(no_position));
  ASSERT_TRUE(doc2);
  auto m2 = load_render_model(*doc2);
  ASSERT_FALSE(m2);
  EXPECT_EQ(m2.error().location.pointer, "/meshes/0/primitives/0/attributes");
}

TEST(CubeLut, IdentityIsTheIdentityStripAndErrorsNameTheLine) {
  const std::string cube = identity_cube_lut();
  auto strip = parse_cube_lut(text(cube));
  ASSERT_TRUE(strip) << strip.error().message;
  std::vector<Vec4> want(1024 * 32);
  fill_identity_lut(want, 2);
  ASSERT_EQ(strip->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    for (std::size_t c = 0; c < 3; ++c) ASSERT_NEAR((*strip)[i][c], want[i][c], 1e-6) << i;
  // The identity LUT returns the shaped input.
  const LutStrip lut{*strip, 2};
  const Vec3 out = lut_sample(lut, {0.3F, 0.6F, 0.9F});
  EXPECT_NEAR(out[0], 0.3F, 1e-5);
  EXPECT_NEAR(out[2], 0.9F, 1e-5);
  auto bad = parse_cube_lut(text("LUT_3D_SIZE 33\n"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, codes::RENDER_LUT.str());
  EXPECT_EQ(bad.error().location.member, "line 1");
  auto short_lut = parse_cube_lut(text("LUT_3D_SIZE 32\n0 0 0\n0 0 x\n"));
  ASSERT_FALSE(short_lut);
  EXPECT_EQ(short_lut.error().location.member, "line 3");
  EXPECT_FALSE(parse_cube_lut(text("LUT_3D_SIZE 32\n0 0 0\n")));  // too few lines
}

TEST(PngLut, StripFromAPngAndItsSize) {
  scene::RgbaImage img;
  img.width = 1024;
  img.height = 32;
  for (std::uint32_t y = 0; y < 32; ++y)
    for (std::uint32_t x = 0; x < 1024; ++x)
      img.pixels.insert(img.pixels.end(),
                        {static_cast<std::uint8_t>(x % 32 * 8), static_cast<std::uint8_t>(y * 8),
                         static_cast<std::uint8_t>(x / 32 * 8), 255});
  auto png = scene::encode_png(img);
  ASSERT_TRUE(png);
  auto strip = parse_png_lut(*png);
  ASSERT_TRUE(strip) << strip.error().message;
  // Texel (x = 32·3 + 5, y = 7): slice 3, red 5, green 7.
  const Vec4& t = (*strip)[7 * 1024 + 3 * 32 + 5];
  EXPECT_FLOAT_EQ(t[0], 40.0F / 255.0F);
  EXPECT_FLOAT_EQ(t[1], 56.0F / 255.0F);
  EXPECT_FLOAT_EQ(t[2], 24.0F / 255.0F);
  img.width = 512;
  img.pixels.resize(512 * 32 * 4);
  auto small = parse_png_lut(*scene::encode_png(img));
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().code, codes::RENDER_LUT.str());
}

}  // namespace
}  // namespace charkit::render
