// `bem pack` from JSON templates and from project folders (project.json).
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

/// A JSON template for the builder's target: component 0 in the builder's
/// rigid layout (position, UV, one bone index) with its colour texture.
std::string builder_json_template(const std::string& texture_extra = "") {
  const Json target = testkit::make_valid_package(3).manifest["target"];
  return R"({"target": )" + target.dump() + R"(, "layouts": [{"component": 0,
      "attributes": [[0,0,3,0,0],[4,0,2,1,0],[13,6,4,2,0]], "strides": [12, 8, 4],
      "textures": [{"material_slot": 0, "original_name": "T_actor_example_body_01_d",
                    "srgb": true, "format": "RGBA32")" +
         texture_extra + "}]}]}";
}

// No package to start from: a JSON template (the target, the layout and
// texture facts) and the builder package's export give that package's mesh
// and texture bytes back, in a package of their own (no options: BEM 1.3).
TEST(BemPackTemplate, AJsonTemplateAndASceneMakeAPackage) {
  const std::string text = builder_json_template();
  auto tmpl = load_json_template(core::as_bytes(text));
  ASSERT_TRUE(tmpl.ok()) << tmpl.error().to_string();
  const testkit::TestPackage original = testkit::make_valid_package(3);
  auto doc = scene::GltfDocument::load(export_default(original.binary()));
  ASSERT_TRUE(doc.ok());
  PackOptions o;
  o.fresh = true;
  auto r = pack_scene(tmpl->content, tmpl->model, *doc, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  ASSERT_EQ(m["meshes"].size(), 1u);
  ASSERT_EQ(m["meshes"][0]["draws"].size(), 1u);
  EXPECT_EQ(m["meshes"][0]["vertex_count"], 3);
  EXPECT_EQ(m["option_groups"], Json::array());
  EXPECT_EQ(m["component_rules"], Json::parse(R"([
      {"target":0,"candidates":[{"when":true,"operation":"replace","mesh":0}]},
      {"target":1,"candidates":[{"when":true,"operation":"keep"}]}])"));
  EXPECT_EQ(m["target"], original.manifest["target"]);
  for (const char* ptr :
       {"/meshes/0/streams/0/payload", "/meshes/0/streams/1/payload", "/meshes/0/streams/2/payload",
        "/meshes/0/draws/0/indices", "/textures/0/payload"})
    EXPECT_EQ(
        payload_at(r->content, ptr),
        original.payloads.at(original.manifest.at(Json::json_pointer(ptr)).get<std::size_t>()))
        << ptr;
  EXPECT_EQ(m["meshes"][0]["bones"],
            Json::parse(R"([{"component":0,"index":0,"name":"Bip001_Pelvis"}])"));
  core::Report report;
  auto written = write_binary(r->content, {}, &report);
  ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("packed");
  EXPECT_EQ(written->stats.minor, 3);
  EXPECT_TRUE(load_package(written->bytes).ok());

  // The scene without the texture's image: the draw needs it.
  auto no_image = scene::GltfDocument::load(build_scene(triangle_scene()));
  ASSERT_TRUE(no_image.ok());
  r = pack_scene(tmpl->content, tmpl->model, *no_image, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_TEXTURE");
  EXPECT_NE(r.error().message.find("T_actor_example_body_01_d"), std::string::npos);
}

// A second primitive of a material gets a draw of its own (a copy of the
// first one's material and textures), in a template package too.
TEST(BemPackTemplate, ASecondPrimitiveOfAMaterialIsANewDraw) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.primitives.push_back({"M_actor_example_body_01", {2, 1, 0}});
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& draws = r->content.manifest["meshes"][0]["draws"];
  ASSERT_EQ(draws.size(), 2u);
  EXPECT_EQ(draws[1]["material_name"], "M_actor_example_body_01");
  EXPECT_EQ(draws[1]["textures"], draws[0]["textures"]);
  EXPECT_EQ(r->meshes[0].draws_added, 1u);
  EXPECT_TRUE(write_binary(r->content).ok());
  // The hair component's material on the body mesh: a draw of component 1's
  // slot 0 (§7: any component can donate a material), no textures of its own.
  s.primitives.back().first = "M_actor_example_hair_01";
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->content.manifest["meshes"][0]["draws"][1]["material_component"], 1);
  EXPECT_EQ(r->content.manifest["meshes"][0]["draws"][1]["material_slot"], 0);
  EXPECT_EQ(r->content.manifest["meshes"][0]["draws"][1]["textures"], Json::array());
  EXPECT_TRUE(write_binary(r->content).ok());
  // A name no component has: refused, listing the names it can have.
  s.primitives.back().first = "M_unknown";
  r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_MATERIAL");
  EXPECT_NE(r.error().message.find("\"M_actor_example_hair_01\""), std::string::npos)
      << r.error().message;
}

TEST(BemPackTemplate, FactsAreNeverGuessed) {
  auto code_of = [](const std::string& text) {
    auto r = load_json_template(core::as_bytes(text));
    return r.ok() ? std::string("ok") : r.error().code + " " + r.error().location.pointer;
  };
  EXPECT_EQ(code_of(builder_json_template()), "ok");
  std::string no_srgb = builder_json_template();
  no_srgb.replace(no_srgb.find(R"("srgb": true,)"), 13, "");
  EXPECT_EQ(code_of(no_srgb), "BEM_PACK_TEMPLATE /layouts/0/textures/0/srgb");
  std::string no_layout = builder_json_template();
  no_layout.replace(no_layout.find(R"("attributes")"), 12, R"("attributez")");
  EXPECT_EQ(code_of(no_layout), "BEM_PACK_TEMPLATE /layouts/0/attributez");
  EXPECT_EQ(code_of(R"({"target": {"components": []}, "layouts": []})"),
            "BEM_PACK_TEMPLATE /layouts");
  EXPECT_EQ(code_of(builder_json_template(R"(, "semantic": "mask")")),
            "BEM_PACK_TEMPLATE /layouts/0/textures/0/semantic");
  // A layout the validator refuses (a stride that does not match the
  // attributes): its first issue, at the manifest pointer.
  std::string stride = builder_json_template();
  stride.replace(stride.find("[12, 8, 4]"), 10, "[16, 8, 4]");
  EXPECT_EQ(code_of(stride).rfind("BEM_PACK_TEMPLATE /meshes/0", 0), 0u) << code_of(stride);
}

/// A scratch folder for project files, removed at the end of the test.
struct ProjectDir {
  std::filesystem::path dir;
  ProjectDir() {
    dir = std::filesystem::temp_directory_path() /
          ("charkit-project-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "payloads");
  }
  ~ProjectDir() { std::filesystem::remove_all(dir); }
  void put(const std::string& name, const ByteVec& bytes) const {
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  /// project.json of `p`'s manifest with payload i in payloads/i.bin (paths
  /// written with the public tool's backslashes on odd ids).
  std::string write_project(const testkit::TestPackage& p, Json manifest) const {
    Json files = Json::array();
    for (std::size_t i = 0; i < p.payloads.size(); ++i) {
      const std::string name = "payloads/" + std::to_string(i) + ".bin";
      put(name, p.payloads[i]);
      files.push_back(i % 2 ? "payloads\\" + std::to_string(i) + ".bin" : name);
    }
    const std::string text = Json{{"manifest", manifest}, {"payload_files", files}}.dump(1);
    put("project.json", ByteVec(text.begin(), text.end()));
    return (dir / "project.json").string();
  }
};

// The public BEM project's project.json: payload i is payload_files[i];
// the capabilities the manifest uses and does not list are declared; the
// package written from it holds the same manifest and payloads.
TEST(BemPackProject, ProjectJsonBecomesThePackage) {
  ProjectDir d;
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json manifest = p.manifest;
  manifest["root_offset"] = Json{{"path", "Bip001"}, {"translation", {0.0, 0.04, 0.0}}};
  const std::string path = d.write_project(p, manifest);
  ASSERT_TRUE(looks_like_project_file(path));
  auto content = read_project_file(path);
  ASSERT_TRUE(content.ok()) << content.error().to_string();
  ASSERT_EQ(content->payloads.size(), p.payloads.size());
  for (std::size_t i = 0; i < p.payloads.size(); ++i)
    EXPECT_EQ(content->payloads[i], p.payloads[i]);
  const PackSpec spec = spec_of(R"({"package_id": "creator.project", "version": "3.0.0"})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack_project(std::move(*content), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& caps = r->content.manifest["required_capabilities"];
  EXPECT_NE(std::find(caps.begin(), caps.end(), Json("root-offset-v1")), caps.end());
  EXPECT_EQ(r->content.manifest["package_id"], "creator.project");
  core::Report report;
  auto written = write_binary(r->content, {}, &report);
  ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("project");
  EXPECT_EQ(written->stats.minor, 5);
  auto back = read_package_content(written->bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->payloads, p.payloads);
  EXPECT_EQ(back->manifest["root_offset"], manifest["root_offset"]);
  // Spec parameters have no shape keys to come from here.
  const PackSpec sliders = spec_of(R"({"parameters": [{"id": "x"}]})");
  o.spec = &sliders;
  auto refused = pack_project(*read_project_file(path), o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "BEM_PACK_SPEC");
}

TEST(BemPackProject, PathsStayInsideTheProject) {
  ProjectDir d;
  d.put("payloads/0.bin", ByteVec{1, 2, 3});
  d.put("empty.bin", ByteVec{});
  std::filesystem::create_symlink(d.dir / "payloads" / "0.bin", d.dir / "link.bin");
  auto code_of = [&](const Json& project) {
    const std::string text = project.dump();
    d.put("p.json", ByteVec(text.begin(), text.end()));
    auto r = read_project_file((d.dir / "p.json").string());
    return r.ok() ? std::string("ok") : r.error().code + " " + r.error().location.pointer;
  };
  const Json m = Json::object();
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"payloads/0.bin"}}}), "ok");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"../x.bin"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"payloads/../../x.bin"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"/etc/passwd"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"C:/x.bin"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"link.bin"}}}), "BEM_FOLDER_SYMLINK ");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"empty.bin"}}}),
            "BEM_PAYLOAD_DECODED_SIZE ");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"missing.bin"}}}), "IO_OPEN ");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {3}}}), "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"payload_files", Json::array()}}), "BEM_PROJECT /manifest");
  EXPECT_EQ(code_of(Json{{"manifest", m}}), "BEM_PROJECT /payload_files");
}

}  // namespace
}  // namespace charkit::bem
