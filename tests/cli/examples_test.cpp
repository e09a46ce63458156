// tests/data/examples/ never rots: the committed bytes equal what the
// generator makes today, every example is valid, and the CLI reads them.
#include <fstream>
#include <iterator>

#include "charkit/bem/validate.h"
#include "cli_support.h"
#include "example_packages.h"

namespace charkit::clitest {
namespace {

std::vector<std::uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::filesystem::path kDir = CHARKIT_EXAMPLES_DIR;

TEST(Examples, CommittedBytesMatchGenerator) {
  auto examples = examples::make_example_packages();
  ASSERT_GE(examples.size(), 2u);
  for (const auto& e : examples) {
    auto committed = read_file(kDir / e.name);
    EXPECT_TRUE(committed == e.bytes)
        << e.name << " differs from the generator (" << committed.size() << " vs " << e.bytes.size()
        << " bytes); regenerate with: charkit_make_examples tests/data/examples";
  }
}

TEST(Examples, AllValid) {
  for (const auto& e : examples::make_example_packages()) {
    auto r = bem::validate_package(e.bytes);
    EXPECT_TRUE(r.valid()) << e.name << "\n" << r.report.to_text(e.name);
  }
}

TEST(Examples, CliValidatesAndInspectsThem) {
  std::string args;
  for (const auto& e : examples::make_example_packages()) args += " " + quote(kDir / e.name);
  auto v = run_charkit("bem validate" + args);
  EXPECT_EQ(v.exit_code, 0) << v.out;
  auto i = run_charkit("bem inspect " + quote(kDir / "example-1.5.bem"));
  EXPECT_EQ(i.exit_code, 0) << i.out;
  EXPECT_NE(i.out.find("root offset: Bip001"), std::string::npos) << i.out;
}

}  // namespace
}  // namespace charkit::clitest
