// §4 target (legacy form), the 1.4 explicit resource form and §9 bone-name
// aliases (check_target).
#include <gtest/gtest.h>

#include <string>

#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "package_builder.h"

using namespace charkit;
using core::Json;
using testkit::TestPackage;

namespace {

bem::ValidationResult validate_target(const TestPackage& p, bool zip = false, bool skip = false) {
  bem::ValidateOptions o;
  o.skip_validation = skip;
  auto bytes = zip ? p.zip() : p.binary();
  return bem::validate_package(bytes, o);
}

::testing::AssertionResult has_target_error(const TestPackage& p, const std::string& code,
                                            bool skip = false) {
  auto r = validate_target(p, false, skip);
  if (r.report.has_code(code) && !r.valid()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << code << "\n" << r.report.to_text("pkg");
}

::testing::AssertionResult target_is_valid(const TestPackage& p, bool skip = false) {
  for (bool zip : {false, true}) {
    auto r = validate_target(p, zip, skip);
    if (!r.valid())
      return ::testing::AssertionFailure()
             << (zip ? "zip: " : "binary: ") << r.report.to_text("pkg");
  }
  return ::testing::AssertionSuccess();
}

Json& comp(TestPackage& p, std::size_t i) {
  return p.manifest["target"]["components"][i];
}
Json& target(TestPackage& p) {
  return p.manifest["target"];
}

/// 1.2+ package whose component 0 has one valid bone alias.
TestPackage with_alias(int minor) {
  auto p = testkit::make_valid_package(minor);
  p.manifest["required_capabilities"].push_back("resource-bone-aliases");
  comp(p, 0)["bone_name_aliases"] =
      Json::array({Json{{"index", 1}, {"resource", "ui"}, {"name", "Bip001_Spine_typo"}}});
  return p;
}

/// The 1.4 explicit package with a second resource "ui" that owns component 1.
TestPackage two_resources(int minor = 4) {
  auto p = testkit::make_valid_package_v14();
  p.minor = minor;
  target(p)["resources"].push_back(Json{{"id", "ui"},
                                        {"name", "chr_0013_aglina_uimodel"},
                                        {"asset_path", "assets/ui/chr_0013_aglina_uimodel.prefab"},
                                        {"platforms", Json::array({"windows-x64"})},
                                        {"lod", 0}});
  comp(p, 1)["resource"] = "ui";
  return p;
}

/// Add one kept component (a 1.1+ legacy package) so that the package has n.
void grow_components(TestPackage& p, std::size_t n) {
  Json& comps = target(p)["components"];
  for (std::size_t i = comps.size(); i < n; ++i) {
    comps.push_back(Json{{"id", i},
                         {"mesh_name", "S_extra_" + std::to_string(i) + "_lod0"},
                         {"original_index_count", 3},
                         {"bone_names", Json::array({"Bip001_Pelvis"})},
                         {"materials", Json::array({"M_extra"})}});
    p.manifest["component_rules"].push_back(Json{
        {"target", i}, {"candidates", Json::array({Json{{"when", true}, {"operation", "keep"}}})}});
  }
}

class TargetAllMinors : public ::testing::TestWithParam<int> {};

}  // namespace

// ---------------------------------------------------------------- legacy
TEST_P(TargetAllMinors, PlatformIsTheFormatConstant) {
  auto p = testkit::make_valid_package(GetParam());
  target(p)["platform"] = "android-arm64";
  EXPECT_TRUE(has_target_error(p, "BEM_TARGET_PLATFORM"));
  target(p)["platform"] = "Windows-x64";
  EXPECT_TRUE(has_target_error(p, "BEM_TARGET_PLATFORM"));
  target(p).erase("platform");
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_MISSING"));
}

TEST_P(TargetAllMinors, RequiredLegacyFields) {
  for (const char* key : {"character_id", "profile_id", "revision", "snapshot", "world_resource",
                          "ui_resource", "components"}) {
    auto p = testkit::make_valid_package(GetParam());
    target(p).erase(key);
    EXPECT_TRUE(has_target_error(p, "BEM_FIELD_MISSING")) << key;
  }
}

TEST_P(TargetAllMinors, WorldAndUiResourceDiffer) {
  auto p = testkit::make_valid_package(GetParam());
  target(p)["ui_resource"] = target(p)["world_resource"];
  EXPECT_TRUE(has_target_error(p, "BEM_TARGET_RESOURCES_EQUAL"));
}

TEST_P(TargetAllMinors, ComponentIdsArePositions) {
  auto p = testkit::make_valid_package(GetParam());
  comp(p, 0)["id"] = 1;
  comp(p, 1)["id"] = 0;
  EXPECT_TRUE(has_target_error(p, "BEM_COMPONENT_ID"));
  p = testkit::make_valid_package(GetParam());
  comp(p, 1)["id"] = 2;
  EXPECT_TRUE(has_target_error(p, "BEM_COMPONENT_ID"));
}

TEST_P(TargetAllMinors, MeshNames) {
  auto p = testkit::make_valid_package(GetParam());
  comp(p, 1)["mesh_name"] = comp(p, 0)["mesh_name"];
  EXPECT_TRUE(has_target_error(p, "BEM_DUPLICATE_MESH_NAME"));
  comp(p, 1)["mesh_name"] = "";
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
  comp(p, 1)["mesh_name"] = std::string(257, 'm');
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
}

TEST_P(TargetAllMinors, OriginalIndexCount) {
  auto p = testkit::make_valid_package(GetParam());
  comp(p, 0)["original_index_count"] = 301;
  EXPECT_TRUE(has_target_error(p, "BEM_INDEX_COUNT_MULTIPLE"));
  comp(p, 0)["original_index_count"] = 0;
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_RANGE"));
  comp(p, 0)["original_index_count"] = 300.0;
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_TYPE"));
  comp(p, 0)["original_index_count"] = -3;
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_TYPE"));
}

TEST_P(TargetAllMinors, LegacyTargetRejectsExplicitFields) {
  auto p = testkit::make_valid_package(GetParam());
  comp(p, 0)["renderer_kind"] = "skinned";
  EXPECT_TRUE(has_target_error(p, "BEM_TARGET_MIXED"));
  p = testkit::make_valid_package(GetParam());
  target(p)["kind"] = "character";
  EXPECT_TRUE(has_target_error(p, "BEM_TARGET_MIXED"));
}

INSTANTIATE_TEST_SUITE_P(Minors, TargetAllMinors, ::testing::Range(0, 6));

TEST(Target, CharacterIdIsStableId) {
  auto p = testkit::make_valid_package(1);
  target(p)["character_id"] = "chr 0013";
  EXPECT_TRUE(has_target_error(p, "BEM_STABLE_ID"));
}

TEST(Target, SnapshotMayBeEmptyButNotTooLong) {
  auto p = testkit::make_valid_package(1);
  target(p)["snapshot"] = "";
  EXPECT_TRUE(target_is_valid(p));
  target(p)["snapshot"] = std::string(257, 's');
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
  p = testkit::make_valid_package(1);
  target(p)["profile_id"] = "";
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
}

TEST(Target, ComponentCount) {
  auto p = testkit::make_valid_package(2);
  grow_components(p, 64);
  EXPECT_TRUE(target_is_valid(p));
  grow_components(p, 65);
  EXPECT_TRUE(has_target_error(p, "BEM_ARRAY_SIZE"));
  p = testkit::make_valid_package(2);
  target(p)["components"] = Json::array();
  EXPECT_TRUE(has_target_error(p, "BEM_ARRAY_SIZE"));
  target(p)["components"] = Json::object();
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_TYPE"));
}

TEST(Target, BoneAndMaterialTables) {
  auto p = testkit::make_valid_package(1);
  Json bones = Json::array();
  for (int i = 0; i < 65537; ++i) bones.push_back("b" + std::to_string(i));
  comp(p, 1)["bone_names"] = bones;
  EXPECT_TRUE(has_target_error(p, "BEM_ARRAY_SIZE"));
  p = testkit::make_valid_package(1);
  Json mats = Json::array();
  for (int i = 0; i < 257; ++i) mats.push_back("M" + std::to_string(i));
  comp(p, 1)["materials"] = mats;
  EXPECT_TRUE(has_target_error(p, "BEM_ARRAY_SIZE"));
  mats.erase(mats.size() - 1);
  comp(p, 1)["materials"] = mats;
  EXPECT_TRUE(target_is_valid(p));
  p = testkit::make_valid_package(1);
  comp(p, 1)["bone_names"].push_back(5);
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_TYPE"));
  p = testkit::make_valid_package(1);
  comp(p, 1)["materials"].push_back("");
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
}

// ----------------------------------------------------------- §9 aliases
TEST(Target, BoneAliasesValidFromOnePointTwo) {
  for (int minor = 2; minor <= 5; ++minor) EXPECT_TRUE(target_is_valid(with_alias(minor))) << minor;
}

TEST(Target, BoneAliasesNeedOnePointTwo) {
  EXPECT_TRUE(has_target_error(with_alias(1), "BEM_VERSION_TOO_LOW"));
}

TEST(Target, BoneAliasesNeedCapability) {
  auto p = with_alias(3);
  p.manifest["required_capabilities"].erase(p.manifest["required_capabilities"].size() - 1);
  EXPECT_TRUE(has_target_error(p, "BEM_CAPABILITY_MISSING"));
}

TEST(Target, BoneAliasRules) {
  auto p = with_alias(2);
  comp(p, 0)["bone_name_aliases"][0]["index"] = 2;
  EXPECT_TRUE(has_target_error(p, "BEM_BONE_ALIAS_INDEX"));
  p = with_alias(2);
  comp(p, 0)["bone_name_aliases"][0]["resource"] = "scene";
  EXPECT_TRUE(has_target_error(p, "BEM_BONE_ALIAS_RESOURCE"));
  p = with_alias(2);
  comp(p, 0)["bone_name_aliases"][0]["name"] = "Bip001_Spine";
  EXPECT_TRUE(has_target_error(p, "BEM_BONE_ALIAS_SAME_NAME"));
  p = with_alias(2);
  comp(p, 0)["bone_name_aliases"].push_back(
      Json{{"index", 1}, {"resource", "ui"}, {"name", "Other_name"}});
  EXPECT_TRUE(has_target_error(p, "BEM_BONE_ALIAS_DUPLICATE"));
  p = with_alias(2);
  comp(p, 0)["bone_name_aliases"].push_back(
      Json{{"index", 1}, {"resource", "world"}, {"name", "Other_name"}});
  EXPECT_TRUE(target_is_valid(p));
  p = with_alias(2);
  comp(p, 0)["bone_name_aliases"][0].erase("name");
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_MISSING"));
  p = with_alias(2);
  comp(p, 0)["bone_name_aliases"] = Json::object();
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_TYPE"));
}

// -------------------------------------------------------- 1.4 explicit
TEST(ExplicitTarget, ValidIn14And15) {
  auto p = testkit::make_valid_package_v14();
  EXPECT_TRUE(target_is_valid(p));
  p.minor = 5;
  EXPECT_TRUE(target_is_valid(p));
  EXPECT_TRUE(target_is_valid(two_resources(4)));
  EXPECT_TRUE(target_is_valid(two_resources(5)));
}

TEST(ExplicitTarget, NeedsOnePointFour) {
  for (int minor = 1; minor <= 3; ++minor) {
    auto p = testkit::make_valid_package_v14();
    p.minor = minor;
    EXPECT_TRUE(has_target_error(p, "BEM_VERSION_TOO_LOW")) << minor;
  }
}

TEST(ExplicitTarget, ResourcesNeedCapability) {
  auto p = testkit::make_valid_package_v14();
  p.manifest["required_capabilities"].erase(p.manifest["required_capabilities"].size() - 1);
  EXPECT_TRUE(has_target_error(p, "BEM_CAPABILITY_MISSING"));
}

TEST(ExplicitTarget, LegacyFieldsAreNotMixedIn) {
  for (const char* key : {"character_id", "world_resource", "ui_resource"}) {
    auto p = testkit::make_valid_package_v14();
    target(p)[key] = "chr_0013_aglina_postmodel";
    EXPECT_TRUE(has_target_error(p, "BEM_TARGET_MIXED")) << key;
  }
}

TEST(ExplicitTarget, TargetFields) {
  auto p = testkit::make_valid_package_v14();
  target(p)["kind"] = "npc";
  EXPECT_TRUE(has_target_error(p, "BEM_TARGET_KIND"));
  target(p)["kind"] = "weapon";
  EXPECT_TRUE(target_is_valid(p));
  p = testkit::make_valid_package_v14();
  target(p)["snapshot"] = "";
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
  p = testkit::make_valid_package_v14();
  target(p)["id"] = "chr/0013";
  EXPECT_TRUE(has_target_error(p, "BEM_STABLE_ID"));
  for (const char* key : {"kind", "id", "profile_id", "revision", "snapshot", "resources"}) {
    p = testkit::make_valid_package_v14();
    target(p).erase(key);
    if (std::string(key) == "resources") continue;  // that is the legacy form then
    EXPECT_TRUE(has_target_error(p, "BEM_FIELD_MISSING")) << key;
  }
}

TEST(ExplicitTarget, ProfileIdIsStableIdRelaxedBySkip) {
  auto p = testkit::make_valid_package_v14();
  target(p)["profile_id"] = "aglina windows";
  EXPECT_TRUE(has_target_error(p, "BEM_STABLE_ID"));
  EXPECT_TRUE(target_is_valid(p, /*skip=*/true));
}

TEST(ExplicitTarget, ResourceCountAndFields) {
  auto p = testkit::make_valid_package_v14();
  target(p)["resources"] = Json::array();
  EXPECT_TRUE(has_target_error(p, "BEM_ARRAY_SIZE"));
  p = testkit::make_valid_package_v14();
  for (int i = 1; i < 33; ++i) {
    Json r = target(p)["resources"][0];
    r["id"] = "r" + std::to_string(i);
    target(p)["resources"].push_back(r);
  }
  EXPECT_TRUE(has_target_error(p, "BEM_ARRAY_SIZE"));
  p = testkit::make_valid_package_v14();
  target(p)["resources"][0]["comment"] = "extra";
  EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_FIELD"));
  for (const char* key : {"id", "name", "asset_path", "platforms", "lod"}) {
    p = testkit::make_valid_package_v14();
    target(p)["resources"][0].erase(key);
    EXPECT_TRUE(has_target_error(p, "BEM_FIELD_MISSING")) << key;
  }
  p = testkit::make_valid_package_v14();
  target(p)["resources"][0]["lod"] = 4;
  EXPECT_TRUE(has_target_error(p, "BEM_FIELD_RANGE"));
}

TEST(ExplicitTarget, ResourceNameAndAssetPath) {
  auto p = testkit::make_valid_package_v14();
  target(p)["resources"][0]["name"] = "Chr_0013_aglina_postmodel";
  target(p)["resources"][0]["asset_path"] = "assets/characters/Chr_0013_aglina_postmodel.prefab";
  EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_NAME"));
  EXPECT_TRUE(target_is_valid(p, /*skip=*/true));
  const char* bad_paths[] = {
      "assets/characters/other.prefab",                        // stem != name
      "assets\\characters\\chr_0013_aglina_postmodel.prefab",  // backslash
      "characters/chr_0013_aglina_postmodel.prefab",           // not under assets/
      "assets//chr_0013_aglina_postmodel.prefab",              // empty segment
      "assets/../chr_0013_aglina_postmodel.prefab",            // ..
      "assets/./chr_0013_aglina_postmodel.prefab",             // .
      "c:/assets/chr_0013_aglina_postmodel.prefab",            // colon
      "Assets/characters/chr_0013_aglina_postmodel.prefab",    // not lower-case
      "assets/characters/chr_0013_aglina_postmodel.asset",     // not .prefab
  };
  for (const char* path : bad_paths) {
    p = testkit::make_valid_package_v14();
    target(p)["resources"][0]["asset_path"] = path;
    EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_ASSET_PATH")) << path;
    EXPECT_TRUE(target_is_valid(p, /*skip=*/true)) << path;
  }
  p = testkit::make_valid_package_v14();
  target(p)["resources"][0]["asset_path"] = "assets/chr_0013_aglina_postmodel.prefab";
  EXPECT_TRUE(target_is_valid(p));
  target(p)["resources"][0]["asset_path"] =
      "assets/" + std::string(1000, 'd') + "/chr_0013_aglina_postmodel.prefab";
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
}

TEST(ExplicitTarget, ResourcePlatforms) {
  auto p = testkit::make_valid_package_v14();
  target(p)["resources"][0]["platforms"] = Json::array();
  EXPECT_TRUE(has_target_error(p, "BEM_ARRAY_SIZE"));
  target(p)["resources"][0]["platforms"] = Json::array({"ios-arm64"});
  EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_PLATFORM"));
  target(p)["resources"][0]["platforms"] = Json::array({"windows-x64", "windows-x64"});
  EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_PLATFORM"));
  target(p)["resources"][0]["platforms"] = Json::array({"android-arm64"});
  EXPECT_TRUE(target_is_valid(p));
}

TEST(ExplicitTarget, ResourceRootUniquePerPlatform) {
  auto p = two_resources();
  target(p)["resources"][1]["name"] = "chr_0013_aglina_postmodel";
  target(p)["resources"][1]["asset_path"] = "assets/ui/chr_0013_aglina_postmodel.prefab";
  EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_DUPLICATE_ROOT"));
  EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_DUPLICATE_ROOT", /*skip=*/true));
  // The same root for different platforms is fine.
  target(p)["resources"][0]["platforms"] = Json::array({"android-arm64"});
  EXPECT_TRUE(target_is_valid(p));
  p = two_resources();
  target(p)["resources"][1]["id"] = "world";
  EXPECT_TRUE(has_target_error(p, "BEM_DUPLICATE_ID"));
}

TEST(ExplicitTarget, EveryResourceHasAComponent) {
  auto p = two_resources();
  comp(p, 1)["resource"] = "world";
  EXPECT_TRUE(has_target_error(p, "BEM_RESOURCE_UNUSED"));
}

TEST(ExplicitTarget, ComponentFields) {
  auto p = testkit::make_valid_package_v14();
  comp(p, 1)["resource"] = "ui";
  EXPECT_TRUE(has_target_error(p, "BEM_COMPONENT_RESOURCE"));
  p = testkit::make_valid_package_v14();
  comp(p, 1)["renderer_kind"] = "mesh";
  EXPECT_TRUE(has_target_error(p, "BEM_RENDERER_KIND"));
  for (const char* key : {"resource", "renderer_kind", "renderer_path"}) {
    p = testkit::make_valid_package_v14();
    comp(p, 1).erase(key);
    EXPECT_TRUE(has_target_error(p, "BEM_FIELD_MISSING")) << key;
  }
  p = testkit::make_valid_package_v14();
  comp(p, 1)["id"] = 5;
  EXPECT_TRUE(has_target_error(p, "BEM_COMPONENT_ID"));
}

TEST(ExplicitTarget, BoneAliasesForbiddenEvenEmpty) {
  auto p = testkit::make_valid_package_v14();
  comp(p, 0)["bone_name_aliases"] = Json::array();
  EXPECT_TRUE(has_target_error(p, "BEM_BONE_ALIASES_EXPLICIT"));
  p.manifest["required_capabilities"].push_back("resource-bone-aliases");
  comp(p, 0)["bone_name_aliases"] =
      Json::array({Json{{"index", 1}, {"resource", "ui"}, {"name", "Bip001_Spine_typo"}}});
  EXPECT_TRUE(has_target_error(p, "BEM_BONE_ALIASES_EXPLICIT"));
}

TEST(ExplicitTarget, StaticComponents) {
  auto p = testkit::make_valid_package_v14();
  p.manifest["required_capabilities"].push_back("static-meshes");
  comp(p, 1)["renderer_kind"] = "static";
  comp(p, 1)["bone_names"] = Json::array();
  EXPECT_TRUE(target_is_valid(p));
  p.minor = 5;
  EXPECT_TRUE(target_is_valid(p));
  p.minor = 4;
  comp(p, 1)["bone_names"] = Json::array({"Bip001_Head"});
  EXPECT_TRUE(has_target_error(p, "BEM_STATIC_BONES"));
  comp(p, 1)["bone_names"] = Json::array();
  p.manifest["required_capabilities"].erase(p.manifest["required_capabilities"].size() - 1);
  EXPECT_TRUE(has_target_error(p, "BEM_CAPABILITY_MISSING"));
}

TEST(ExplicitTarget, RendererPathSyntax) {
  const char* bad[] = {"/Mesh_all/lod0/hair",  "Mesh_all/lod0/hair/", "Mesh_all//hair",
                       "Mesh_all\\lod0\\hair", "Mesh_all/./hair",     "Mesh_all/../hair",
                       "Mesh_all:hair"};
  for (const char* path : bad) {
    auto p = testkit::make_valid_package_v14();
    comp(p, 1)["renderer_path"] = path;
    EXPECT_TRUE(has_target_error(p, "BEM_RENDERER_PATH")) << path;
    EXPECT_TRUE(target_is_valid(p, /*skip=*/true)) << path;
  }
  auto p = testkit::make_valid_package_v14();
  comp(p, 1)["renderer_path"] = "";  // the root's own renderer
  EXPECT_TRUE(target_is_valid(p));
  comp(p, 1)["renderer_path"] = std::string(1025, 'r');
  EXPECT_TRUE(has_target_error(p, "BEM_STRING_LENGTH"));
}

TEST(ExplicitTarget, RendererPathLodMatchesResourceLod) {
  auto p = testkit::make_valid_package_v14();
  comp(p, 1)["renderer_path"] = "Mesh_all/lod1/hair";
  EXPECT_TRUE(has_target_error(p, "BEM_RENDERER_LOD"));
  EXPECT_TRUE(has_target_error(p, "BEM_RENDERER_LOD", /*skip=*/true));
  target(p)["resources"][0]["lod"] = 1;
  comp(p, 0)["renderer_path"] = "Mesh_all/lod1/body";
  EXPECT_TRUE(target_is_valid(p));
}

TEST(ExplicitTarget, UniqueWithinResource) {
  auto p = testkit::make_valid_package_v14();
  comp(p, 1)["renderer_path"] = comp(p, 0)["renderer_path"];
  EXPECT_TRUE(has_target_error(p, "BEM_DUPLICATE_RENDERER_PATH"));
  p = testkit::make_valid_package_v14();
  comp(p, 1)["mesh_name"] = comp(p, 0)["mesh_name"];
  EXPECT_TRUE(has_target_error(p, "BEM_DUPLICATE_MESH_NAME"));
  // Different resources may reuse mesh names and paths.
  p = two_resources();
  comp(p, 1)["mesh_name"] = comp(p, 0)["mesh_name"];
  comp(p, 1)["renderer_path"] = comp(p, 0)["renderer_path"];
  EXPECT_TRUE(target_is_valid(p));
}
