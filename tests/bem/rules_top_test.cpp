// §1 capabilities, §3 top-level fields, the 1.0 vs 1.1+ structure and the
// §11 candidate totals (check_top_level / check_final).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "package_builder.h"

using namespace charkit;
using core::Json;
using testkit::TestPackage;

namespace {

bem::ValidationResult run(const TestPackage& p, bool zip = false, bool zip_hint = true) {
  auto bytes = zip ? p.zip(false, zip_hint) : p.binary();
  return bem::validate_package(bytes);
}

::testing::AssertionResult has_error(const TestPackage& p, const std::string& code,
                                     bool zip = false, bool zip_hint = true) {
  auto r = run(p, zip, zip_hint);
  if (r.report.has_code(code) && !r.valid()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << code << "\n" << r.report.to_text("pkg");
}

::testing::AssertionResult is_valid(const TestPackage& p, bool zip = false, bool zip_hint = true) {
  auto r = run(p, zip, zip_hint);
  if (r.valid()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.report.to_text("pkg");
}

void remove_cap(Json& m, const std::string& cap) {
  Json out = Json::array();
  for (const auto& c : m["required_capabilities"])
    if (c != cap) out.push_back(c);
  m["required_capabilities"] = out;
}

/// Add `extra` never-true keep candidates to component rule 1 (a 1.1+ package).
void add_candidates(TestPackage& p, std::size_t extra) {
  Json& cands = p.manifest["component_rules"][1]["candidates"];
  for (std::size_t i = 0; i < extra; ++i)
    cands.push_back(Json{{"when", false}, {"operation", "keep"}});
}

class TopLevelAllMinors : public ::testing::TestWithParam<int> {};

}  // namespace

// ---------------------------------------------------------------- baseline
TEST_P(TopLevelAllMinors, BaselineValidBothContainers) {
  auto p = testkit::make_valid_package(GetParam());
  EXPECT_TRUE(is_valid(p));
  EXPECT_TRUE(is_valid(p, true));
  EXPECT_TRUE(is_valid(p, true, false));  // ZIP without format_version
}

TEST_P(TopLevelAllMinors, SchemaMustBeOne) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["schema"] = 2;
  EXPECT_TRUE(has_error(p, "BEM_SCHEMA"));
  p.manifest["schema"] = "1";
  EXPECT_TRUE(has_error(p, "BEM_FIELD_TYPE"));
  p.manifest.erase("schema");
  EXPECT_TRUE(has_error(p, "BEM_FIELD_MISSING"));
}

TEST_P(TopLevelAllMinors, AlwaysRequiredCapabilities) {
  for (const char* cap : {"native-materials", "palette-u8", "indices-u32"}) {
    auto p = testkit::make_valid_package(GetParam());
    remove_cap(p.manifest, cap);
    EXPECT_TRUE(has_error(p, "BEM_CAPABILITY_REQUIRED")) << cap;
  }
}

TEST_P(TopLevelAllMinors, UnknownAndDuplicateCapabilities) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["required_capabilities"].push_back("teleport-v1");
  EXPECT_TRUE(has_error(p, "BEM_CAPABILITY_UNKNOWN"));
  p = testkit::make_valid_package(GetParam());
  p.manifest["required_capabilities"].push_back("palette-u8");
  EXPECT_TRUE(has_error(p, "BEM_CAPABILITY_DUPLICATE"));
  p = testkit::make_valid_package(GetParam());
  p.manifest["required_capabilities"].push_back(7);
  EXPECT_TRUE(has_error(p, "BEM_FIELD_TYPE"));
  p.manifest["required_capabilities"] = "native-materials";
  EXPECT_TRUE(has_error(p, "BEM_FIELD_TYPE"));
  p.manifest.erase("required_capabilities");
  EXPECT_TRUE(has_error(p, "BEM_FIELD_MISSING"));
}

TEST_P(TopLevelAllMinors, StructureCapabilityMissing) {
  auto p = testkit::make_valid_package(GetParam());
  remove_cap(p.manifest, GetParam() == 0 ? "fixed-appearances" : "composable-options");
  EXPECT_TRUE(has_error(p, "BEM_CAPABILITY_MISSING"));
  EXPECT_TRUE(has_error(p, "BEM_CAPABILITY_MISSING", true));
}

TEST_P(TopLevelAllMinors, UnknownTopLevelFieldIsMetadata) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["homepage"] = "https://example.invalid/mod";
  auto r = run(p);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  EXPECT_TRUE(r.report.has_code("BEM_UNKNOWN_FIELD"));
}

TEST_P(TopLevelAllMinors, RequiredTopLevelFields) {
  for (const char* key :
       {"package_id", "name", "author", "version", "target", "meshes", "textures"}) {
    auto p = testkit::make_valid_package(GetParam());
    p.manifest.erase(key);
    EXPECT_TRUE(has_error(p, "BEM_FIELD_MISSING")) << key;
  }
}

TEST_P(TopLevelAllMinors, DeclaredButUnusedCapabilityOfThisVersionIsAllowed) {
  auto p = testkit::make_valid_package(GetParam());
  if (GetParam() >= 1) p.manifest["required_capabilities"].push_back("keep-material-textures");
  if (GetParam() >= 2) p.manifest["required_capabilities"].push_back("texture-slots");
  if (GetParam() >= 3) p.manifest["required_capabilities"].push_back("body-parameters");
  if (GetParam() >= 5) p.manifest["required_capabilities"].push_back("material-overrides-v1");
  EXPECT_TRUE(is_valid(p));
}

INSTANTIATE_TEST_SUITE_P(Minors, TopLevelAllMinors, ::testing::Range(0, 6));

// ---------------------------------------------------------------- identity
TEST(TopLevel, PackageIdIsStableId) {
  auto p = testkit::make_valid_package(1);
  p.manifest["package_id"] = "my package";
  EXPECT_TRUE(has_error(p, "BEM_STABLE_ID"));
  p.manifest["package_id"] = "-leading-dash";
  EXPECT_TRUE(has_error(p, "BEM_STABLE_ID"));
  p.manifest["package_id"] = std::string(97, 'a');
  EXPECT_TRUE(has_error(p, "BEM_STABLE_ID"));
  p.manifest["package_id"] = std::string(96, 'a');
  EXPECT_TRUE(is_valid(p));
  p.manifest["package_id"] = 12;
  EXPECT_TRUE(has_error(p, "BEM_FIELD_TYPE"));
}

TEST(TopLevel, NameLimits) {
  auto p = testkit::make_valid_package(2);
  p.manifest["name"] = std::string(256, 'n');
  EXPECT_TRUE(is_valid(p));
  p.manifest["name"] = std::string(257, 'n');
  EXPECT_TRUE(has_error(p, "BEM_STRING_LENGTH"));
  p.manifest["name"] = "";
  EXPECT_TRUE(has_error(p, "BEM_STRING_LENGTH"));
  // 86 three-byte characters = 258 UTF-8 bytes.
  std::string wide;
  for (int i = 0; i < 86; ++i) wide += "\xE5\xA4\x96";
  p.manifest["name"] = wide;
  EXPECT_TRUE(has_error(p, "BEM_STRING_LENGTH"));
  p = testkit::make_valid_package(2);
  p.manifest["author"] = std::string(257, 'a');
  EXPECT_TRUE(has_error(p, "BEM_STRING_LENGTH"));
  p = testkit::make_valid_package(2);
  p.manifest["version"] = Json::array({1, 0});
  EXPECT_TRUE(has_error(p, "BEM_FIELD_TYPE"));
}

// -------------------------------------------------------------- versions
TEST(TopLevel, CapabilityNewerThanHeaderIsRejected) {
  // Q3: readers of an older header reject newer capabilities, used or not.
  auto p = testkit::make_valid_package(0);
  p.manifest["required_capabilities"].push_back("composable-options");
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  p = testkit::make_valid_package(1);
  p.manifest["required_capabilities"].push_back("texture-slots");
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  p = testkit::make_valid_package(3);
  p.manifest["required_capabilities"].push_back("static-meshes");
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  p = testkit::make_valid_package(4);
  p.manifest["required_capabilities"].push_back("root-offset-v1");
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  p.minor = 5;
  EXPECT_TRUE(is_valid(p));
}

TEST(TopLevel, MultiResourceCapabilityWithoutResources) {
  auto p = testkit::make_valid_package(5);
  p.manifest["required_capabilities"].push_back("multi-resource-targets");
  EXPECT_TRUE(has_error(p, "BEM_TARGET_RESOURCES_CAPABILITY"));
  p.minor = 3;
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
}

TEST(TopLevel, AppearancesOnlyInOnePointZero) {
  auto p = testkit::make_valid_package(0);
  for (int minor = 1; minor <= 5; ++minor) {
    p.minor = minor;
    EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_HIGH")) << minor;
  }
}

TEST(TopLevel, OptionGroupsNeedOnePointOne) {
  auto p = testkit::make_valid_package(1);
  p.minor = 0;
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
}

TEST(TopLevel, OnePointZeroStructureNeedsItsFields) {
  auto p = testkit::make_valid_package(0);
  p.manifest.erase("default_appearance_id");
  EXPECT_TRUE(has_error(p, "BEM_FIELD_MISSING"));
  p = testkit::make_valid_package(0);
  p.manifest.erase("appearances");
  EXPECT_TRUE(has_error(p, "BEM_FIELD_MISSING"));
  p.manifest.erase("default_appearance_id");
  EXPECT_TRUE(has_error(p, "BEM_FIELD_MISSING"));
}

TEST(TopLevel, ComposableStructureNeedsItsFields) {
  for (const char* key : {"option_groups", "component_rules"}) {
    auto p = testkit::make_valid_package(2);
    p.manifest.erase(key);
    EXPECT_TRUE(has_error(p, "BEM_FIELD_MISSING")) << key;
  }
}

TEST(TopLevel, StructuresDoNotMix) {
  // 1.0 structure with 1.1+ fields.
  for (const char* key : {"component_rules", "selection_constraints", "texture_slots"}) {
    auto p = testkit::make_valid_package(0);
    p.manifest[key] = Json::array();
    EXPECT_TRUE(has_error(p, "BEM_STRUCTURE_MIXED")) << key;
    EXPECT_TRUE(has_error(p, "BEM_STRUCTURE_MIXED", true, false)) << key;
  }
  // 1.1+ structure with 1.0 fields.
  for (int minor = 1; minor <= 5; ++minor) {
    auto p = testkit::make_valid_package(minor);
    p.manifest["default_appearance_id"] = "outfit-a";
    EXPECT_TRUE(has_error(p, "BEM_STRUCTURE_MIXED")) << minor;
  }
  auto p = testkit::make_valid_package(2);
  p.manifest["appearances"] = testkit::make_valid_package(0).manifest["appearances"];
  EXPECT_TRUE(has_error(p, "BEM_STRUCTURE_MIXED"));
}

TEST(TopLevel, LaterTopLevelFieldsNeedTheirVersion) {
  auto p = testkit::make_valid_package(2);
  p.manifest["parameters"] = Json::array();
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  p = testkit::make_valid_package(2);
  p.manifest["mesh_deformations"] = Json::array();
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  p = testkit::make_valid_package(4);
  p.manifest["drivers"] = Json::array();
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  p = testkit::make_valid_package(4);
  p.manifest["root_offset"] = Json{{"path", "Bip001"}, {"translation", Json::array({0, 0, 0})}};
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
}

TEST(TopLevel, ZipWithoutHintOnePointZeroCannotUseLaterCapabilities) {
  auto p = testkit::make_valid_package(0);
  p.manifest["required_capabilities"].push_back("texture-slots");
  EXPECT_TRUE(has_error(p, "BEM_STRUCTURE_MIXED", true, false));
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW", true, true));
}

// ------------------------------------------------------------ §11 totals
TEST(TopLevel, CandidateTotalAbove512NeedsOnePointTwo) {
  auto p = testkit::make_valid_package(1);
  add_candidates(p, 520);
  EXPECT_TRUE(has_error(p, "BEM_VERSION_TOO_LOW"));
  for (int minor = 2; minor <= 5; ++minor) {
    p.minor = minor;
    EXPECT_TRUE(is_valid(p)) << minor;
  }
}

TEST(TopLevel, CandidateTotalLimit4096) {
  auto p = testkit::make_valid_package(3);
  // 3 rule candidates + 1 draw + extra: stay at exactly 4096.
  add_candidates(p, 4096 - 4);
  EXPECT_TRUE(is_valid(p));
  // Two more: over the limit whether or not the draw pass has counted its draw.
  add_candidates(p, 2);
  EXPECT_TRUE(has_error(p, "BEM_CANDIDATE_LIMIT"));
}

// ---------------------------------------------------------- robustness
namespace {

void collect_pointers(const Json& j, const std::string& ptr, std::vector<std::string>& out) {
  out.push_back(ptr);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      collect_pointers(it.value(), core::json_pointer_join(ptr, it.key()), out);
  else if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i)
      collect_pointers(j[i], core::json_pointer_join(ptr, i), out);
}

}  // namespace

// Every node of every baseline replaced by every JSON type: validation reports
// errors (or accepts), never crashes or throws.
TEST(TopLevel, TypeConfusionNeverCrashes) {
  const Json replacements[] = {nullptr,        0,   -1, 1.5, 4294967296.0, "x", Json::array(),
                               Json::object(), true};
  std::vector<TestPackage> bases;
  for (int minor = 0; minor <= 5; ++minor) bases.push_back(testkit::make_valid_package(minor));
  bases.push_back(testkit::make_valid_package_v14());
  for (const auto& base : bases) {
    std::vector<std::string> ptrs;
    collect_pointers(base.manifest, "", ptrs);
    for (const auto& ptr : ptrs) {
      if (ptr.empty()) continue;
      for (const auto& rep : replacements) {
        TestPackage p = base;
        p.manifest[Json::json_pointer(ptr)] = rep;
        bem::ValidateOptions o;
        o.check_payloads = false;
        EXPECT_NO_THROW({
          auto r = bem::validate_package(p.binary(), o);
          (void)r;
        }) << ptr;
      }
    }
  }
}
