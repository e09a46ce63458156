#include "example_packages.h"

#include "package_builder.h"

namespace charkit::examples {
namespace {

using testkit::Json;

// The 1.5 example: the baseline 1.5 package plus the 1.5 features a creator
// meets first — a material override on the draw (§12) and a root offset.
testkit::TestPackage example_v15() {
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json& m = p.manifest;
  m["package_id"] = "charkit.example.v15";
  m["name"] = "charkit example (BEM 1.5)";
  m["author"] = "charkit project (CC0)";
  m["required_capabilities"].push_back("material-overrides-v1");
  m["required_capabilities"].push_back("root-offset-v1");
  m["meshes"][0]["draws"][0]["material_overrides"] =
      Json{{"floats", Json{{"_Smoothness", 0.25}}},
           {"colors", Json{{"_BaseColor", Json::array({1.0, 0.9, 0.8, 1.0})}}},
           {"enable_keywords", Json::array({"_EMISSION"})}};
  m["root_offset"] = Json{{"path", "Bip001"}, {"translation", Json::array({0.0, 0.04, 0.0})}};
  return p;
}

// Binary form as a writer makes it (§2): zstd only where it saves bytes.
std::vector<std::uint8_t> binary_best_codec(const testkit::TestPackage& p) {
  testkit::BinaryLayout l;
  l.minor = static_cast<std::uint16_t>(p.minor);
  l.manifest = p.manifest.dump();
  for (const auto& b : p.payloads)
    l.payloads.push_back({b, testkit::zstd_frame(b).size() < b.size()});
  return testkit::build_binary(l);
}

}  // namespace

std::vector<ExampleFile> make_example_packages() {
  testkit::TestPackage v15 = example_v15();
  testkit::TestPackage v14 = testkit::make_valid_package_v14();
  v14.manifest["package_id"] = "charkit.example.v14";
  v14.manifest["author"] = "charkit project (CC0)";
  testkit::TestPackage v10 = testkit::make_valid_package(0);
  v10.manifest["package_id"] = "charkit.example.v10";
  v10.manifest["author"] = "charkit project (CC0)";
  return {
      {"example-1.5.bem", binary_best_codec(v15)},
      {"example-1.5.zip", v15.zip(/*deflate=*/true)},
      {"example-1.4-explicit.bem", v14.binary()},
      {"example-1.0.bem", v10.binary()},
  };
}

}  // namespace charkit::examples
