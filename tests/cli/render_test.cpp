// `charkit render` as a user runs it: a VRM model to a PNG (read back by
// stb_image: not blank, the character covering the expected part of the
// image), the attachment dumps (16-bit PNGs and the 8-bit stencil, read back),
// the parts mapping that routes materials to the face and eye passes, the
// turntable, the pass table, a LUT, and the exit statuses of bad options and
// inputs. Skipped where no Vulkan device exists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/render/lut.h"
#include "charkit/scene/image.h"
#include "cli_support.h"

// stb_image reads the 16-bit dumps back as they are (an independent reader).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>

namespace charkit {
namespace {

using clitest::quote;
using clitest::run_charkit;
using core::Json;

const std::filesystem::path kModels = std::filesystem::path(CHARKIT_TEST_DATA) / "models";

class RenderCli : public clitest::ScratchDir {
 protected:
  void SetUp() override {
    clitest::ScratchDir::SetUp();
    auto info = run_charkit("gpu info --json");
    ASSERT_EQ(info.exit_code, 0);
    if (Json::parse(info.out)["devices"].empty()) GTEST_SKIP() << "no Vulkan device";
  }
  /// RGBA16 samples of a 16-bit PNG (stb_image, no conversion).
  std::vector<std::uint16_t> read_png16(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    int w = 0, h = 0, n = 0;
    stbi_us* px = stbi_load_16_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()),
                                           static_cast<int>(bytes.size()), &w, &h, &n, 4);
    EXPECT_NE(px, nullptr) << p;
    if (px == nullptr) return {};
    std::vector<std::uint16_t> out(px, px + std::size_t(w) * h * 4);
    stbi_image_free(px);
    return out;
  }
  scene::RgbaImage read_png(const std::filesystem::path& p) {
    auto f = core::MappedFile::open(p.string());
    EXPECT_TRUE(f) << p;
    if (!f) return {};
    auto img = scene::decode_image(f->bytes());
    EXPECT_TRUE(img) << p;
    return img ? *img : scene::RgbaImage{};
  }
};

TEST_F(RenderCli, GodetteToPngWithDumps) {
  const auto out = dir_ / "godette.png";
  const auto dump = dir_ / "dump";
  auto r =
      run_charkit("render " + quote(kModels / "Godette_vrm_v4.vrm") + " -o " + quote(out) +
                  " --size 160x200 --shadow-map 512 --dump-attachments " + quote(dump) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["parts"].size(), 4U);
  EXPECT_EQ(j["parts"][0]["part"], "face");
  EXPECT_EQ(j["parts"][0]["reason"], "VRM humanoid bone head");
  ASSERT_EQ(j["expressions"].size(), 17U);  // Godette's blend shape groups, 1.0 names
  EXPECT_EQ(j["expressions"][1], "aa");
  const Json& img = j["images"][0];
  EXPECT_GT(img["coverage"].get<double>(), 0.08);
  EXPECT_LT(img["coverage"].get<double>(), 0.5);
  EXPECT_GT(img["facePixels"].get<int>(), 0);
  // The PNG: the character is opaque and coloured, the rest transparent.
  const scene::RgbaImage png = read_png(out);
  ASSERT_EQ(png.width, 160U);
  ASSERT_EQ(png.height, 200U);
  std::size_t opaque = 0, coloured = 0;
  for (std::size_t i = 0; i < png.pixels.size(); i += 4) {
    opaque += png.pixels[i + 3] == 255 ? 1 : 0;
    coloured += png.pixels[i] + png.pixels[i + 1] + png.pixels[i + 2] > 30 ? 1 : 0;
  }
  EXPECT_EQ(opaque, img["characterPixels"].get<std::size_t>())
      << "opaque pixels are the character's";
  EXPECT_GT(coloured, opaque / 2);
  // The dumps: 16-bit PNGs (read by stb_image's 16-bit loader inside
  // decode_image's format check) and the stencil, whose face pixels are 0x84.
  for (const char* name : {"hdr.png", "material1.png", "material2.png", "normal.png", "depth.png",
                           "shadow.png", "stencil.png"})
    EXPECT_TRUE(std::filesystem::exists(dump / name)) << name;
  const scene::RgbaImage stencil = read_png(dump / "stencil.png");
  std::size_t face = 0;
  for (std::size_t i = 0; i < stencil.pixels.size(); i += 4) face += stencil.pixels[i] == 0x84;
  EXPECT_EQ(face, img["facePixels"].get<std::size_t>());
  const scene::RgbaImage normal = read_png(dump / "normal.png");  // 16-bit → 8 by stb
  EXPECT_EQ(normal.width, 160U);
  // Godette's Face and Body have screen-coordinate MToon outlines, drawn by
  // default; --no-outlines leaves them out and the character shrinks.
  for (const Json& p : j["parts"])
    EXPECT_EQ(p["outline"],
              p["material"] == "Face" || p["material"] == "Body" ? "screenCoordinates" : "none")
        << p["material"];
  EXPECT_EQ(img["outlineDraws"], 2);
  auto bare = run_charkit("render " + quote(kModels / "Godette_vrm_v4.vrm") + " -o " +
                          quote(dir_ / "bare.png") +
                          " --size 160x200 --shadow-map 512 --no-outlines --json");
  ASSERT_EQ(bare.exit_code, 0) << bare.out;
  const Json bare_json = Json::parse(bare.out);
  const Json& bare_img = bare_json["images"][0];
  EXPECT_EQ(bare_img["outlineDraws"], 0);
  EXPECT_LT(bare_img["characterPixels"].get<int>(), img["characterPixels"].get<int>());
}

// --expression: weights by the model's expression names, each 0 to 1; a
// name the model lacks or a malformed list is refused (exit 2) before
// anything is drawn.
TEST_F(RenderCli, ExpressionsAreUsedOrRefused) {
  const auto model = quote(kModels / "Godette_vrm_v4.vrm");
  const auto out = dir_ / "blink.png";
  auto r = run_charkit("render " + model + " -o " + quote(out) +
                           " --size 64x80 --shadow-map 256 --expression blink=1,aa=0.5",
                       true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(out));
  for (const char* bad : {"smirk=1", "blink", "blink=2", "blink=1,blink=0"}) {
    auto b = run_charkit(
        "render " + model + " -o " + quote(dir_ / "no.png") + " --size 64x80 --expression " + bad,
        true);
    EXPECT_EQ(b.exit_code, 2) << bad << ": " << b.out;
    EXPECT_NE(b.out.find(std::string(bad) == "smirk=1" ? "RENDER_EXPRESSION" : "RENDER_OPTION"),
              std::string::npos)
        << b.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "no.png"));
}

TEST_F(RenderCli, PartsFileSendsMaterialsToTheEyePassAndTurntable) {
  const auto parts = dir_ / "parts.json";
  std::ofstream(parts) << R"({"face": ["Red"], "eye": ["Blue"]})";
  const auto out = dir_ / "robot.png";
  auto r = run_charkit("render " + quote(kModels / "debug_robot.vrm") + " -o " + quote(out) +
                       " --size 96x96 --shadow-map 256 --parts " + quote(parts) +
                       " --turntable 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["images"].size(), 2U);
  EXPECT_GT(j["images"][0]["eyePixels"].get<int>(), 0);
  EXPECT_GT(j["images"][0]["facePixels"].get<int>(), 0);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "robot_000.png"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "robot_001.png"));
  EXPECT_EQ(j["images"][1]["yaw"].get<double>(), 180.0);
  // In text, the line names the files a turntable writes (not OUT itself).
  auto text = run_charkit("render " + quote(kModels / "debug_robot.vrm") + " -o " + quote(out) +
                          " --size 64x64 --shadow-map 256 --turntable 2");
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("robot_000.png … "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("robot_001.png (2 views"), std::string::npos) << text.out;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// --motion: CesiumMan's own walk at frame 10 moves the character (another
// image than frame 0) and writes motion vectors where it moved; at frame 0
// (previous frame = this frame) every motion is the zero 127/255.
TEST_F(RenderCli, MotionPosesTheSkeletonAndGivesMotionVectors) {
  const auto model = quote(kModels / "CesiumMan.glb");
  auto moving_pixels = [&](int frame) {
    const auto out = dir_ / ("walk" + std::to_string(frame) + ".png");
    const auto dump = dir_ / ("walk" + std::to_string(frame));
    auto r = run_charkit("render " + model + " --motion " + model + " --frame " +
                         std::to_string(frame) + " -o " + quote(out) +
                         " --size 96x96 --shadow-map 128 --dump-attachments " + quote(dump));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const std::vector<std::uint16_t> m2 = read_png16(dump / "material2.png");
    const scene::RgbaImage colour = read_png(out);
    std::size_t moving = 0;
    for (std::size_t i = 0; i < m2.size() && i < colour.pixels.size(); i += 4)
      if (colour.pixels[i + 3] == 255 && (m2[i] != 127 * 257 || m2[i + 1] != 127 * 257)) ++moving;
    return std::pair{moving, colour.pixels};
  };
  const auto [still, frame0] = moving_pixels(0);
  const auto [moving, frame10] = moving_pixels(10);
  EXPECT_EQ(still, 0U);
  EXPECT_GT(moving, 50U);
  EXPECT_NE(frame0, frame10);
  // A BVH on a VRM through a joint map (humanoid bone names → BVH joints):
  // the arms come down from the T-pose, so the character's outline changes.
  const auto bvh = quote(std::filesystem::path(CHARKIT_TEST_DATA) / "bvh" / "test_mocapbank.bvh");
  const auto map = dir_ / "map.json";
  std::ofstream(map) << R"({"hips": ["Hips"], "leftUpperArm": ["LeftShoulder"],
                            "rightUpperArm": ["RightShoulder"], "leftLowerArm": ["LeftElbow"],
                            "rightLowerArm": ["RightElbow"]})";
  const auto godette = quote(kModels / "Godette_vrm_v4.vrm");
  auto rest = run_charkit("render " + godette + " -o " + quote(dir_ / "rest.png") +
                          " --size 96x96 --shadow-map 128 --json");
  auto posed = run_charkit("render " + godette + " --motion " + bvh + " --joint-map " + quote(map) +
                           " --frame 10 -o " + quote(dir_ / "posed.png") +
                           " --size 96x96 --shadow-map 128 --json");
  ASSERT_EQ(rest.exit_code, 0);
  ASSERT_EQ(posed.exit_code, 0) << posed.out;
  EXPECT_NE(Json::parse(rest.out)["images"][0]["characterPixels"],
            Json::parse(posed.out)["images"][0]["characterPixels"]);
  EXPECT_EQ(run_charkit("render " + godette + " --motion " + bvh + " -o " + quote(dir_ / "x.png") +
                        " --frame 10")
                .exit_code,
            1);  // no Godette joint has a BVH joint's name: map them
  auto bad = run_charkit("render " + model + " --motion " + quote(kModels / "sphere.vrm") + " -o " +
                         quote(dir_ / "x.png"));
  EXPECT_EQ(bad.exit_code, 1);  // that file has no animation
}

TEST_F(RenderCli, ExplainLutAndExitStatuses) {
  auto e = run_charkit("render --explain");
  ASSERT_EQ(e.exit_code, 0);
  EXPECT_NE(e.out.find("Face main shading"), std::string::npos);
  EXPECT_NE(e.out.find("ref 0x84 (132), compare mask 0x80 (128), write mask 0x04 (4)"),
            std::string::npos);
  auto ej = run_charkit("render --explain --json");
  ASSERT_EQ(ej.exit_code, 0);
  const Json passes = Json::parse(ej.out)["passes"];
  ASSERT_EQ(passes.size(), 7U);
  EXPECT_EQ(passes[3]["name"], "outline");  // after face main, before the classification
  EXPECT_EQ(passes[3]["cull"], "Front");
  EXPECT_EQ(passes[1]["cull"], "None");

  const auto lut = dir_ / "identity.cube";
  std::ofstream(lut) << render::identity_cube_lut();
  const auto model = quote(kModels / "sphere.vrm");
  const auto out = quote(dir_ / "s.png");
  EXPECT_EQ(run_charkit("render " + model + " -o " + out + " --size 64x64 --lut " + quote(lut) +
                        " --shadow-map 64")
                .exit_code,
            0);
  // A BEM package's selection renders through the export path.
  auto bem = run_charkit("render " +
                         quote(std::filesystem::path(CHARKIT_EXAMPLES_DIR) / "example-1.5.bem") +
                         " -o " + out + " --size 64x64 --shadow-map 64 --json");
  ASSERT_EQ(bem.exit_code, 0) << bem.out;
  EXPECT_GT(Json::parse(bem.out)["images"][0]["coverage"].get<double>(), 0.01);
  // A misspelt option group renders the default, with the warning `bem export` gives.
  auto misspelt = run_charkit(
      "render " + quote(std::filesystem::path(CHARKIT_EXAMPLES_DIR) / "example-1.5.bem") + " -o " +
          out + " --size 64x64 --shadow-map 64 --options 'outfitt:b'",
      true);
  EXPECT_EQ(misspelt.exit_code, 0) << misspelt.out;
  EXPECT_NE(misspelt.out.find("BEM_SETTINGS_UNKNOWN_GROUP"), std::string::npos) << misspelt.out;
  EXPECT_EQ(run_charkit("render " + model + " -o " + out + " --options x").exit_code, 2);
  const auto bad_lut = dir_ / "bad.cube";
  std::ofstream(bad_lut) << "LUT_3D_SIZE 17\n";
  EXPECT_EQ(run_charkit("render " + model + " -o " + out + " --lut " + quote(bad_lut)).exit_code,
            1);
  EXPECT_EQ(run_charkit("render " + model + " -o " + out + " --size 0x5").exit_code, 2);
  // Past the frame budget (4096 x 4096 pixels): refused before anything is drawn.
  auto huge = run_charkit("render " + model + " -o " + out + " --size 8192x4097", true);
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_NE(huge.out.find("frame budget"), std::string::npos) << huge.out;
  EXPECT_EQ(run_charkit("render " + model + " -o " + quote(dir_ / "s.jpg")).exit_code, 2);
  EXPECT_EQ(run_charkit("render " + model + " -o " + out + " --camera fov=500").exit_code, 2);
  EXPECT_EQ(run_charkit("render " + model + " -o " + out + " --device cpu").exit_code, 2);
  // A turntable is 1 to 360 views: 0 was taken as "no turntable" without a word.
  for (const char* n : {"0", "361"}) {
    auto t = run_charkit("render " + model + " -o " + out + " --turntable " + n, true);
    EXPECT_EQ(t.exit_code, 2) << n;
    EXPECT_NE(t.out.find("--turntable"), std::string::npos) << t.out;
  }
  // A negative frame would mean "the last one" to the motion sampler: refused.
  EXPECT_EQ(run_charkit("render " + model + " -o " + out + " --motion " + model + " --frame -1")
                .exit_code,
            2);
  EXPECT_EQ(
      run_charkit("render " + model + " -o " + out + " --motion " + model + " --fps 0").exit_code,
      2);
  EXPECT_EQ(run_charkit("render " + quote(dir_ / "missing.vrm") + " -o " + out).exit_code, 2);
  const auto junk = dir_ / "junk.glb";
  std::ofstream(junk) << "not a model";
  EXPECT_EQ(run_charkit("render " + quote(junk) + " -o " + out).exit_code, 1);
}

}  // namespace
}  // namespace charkit
