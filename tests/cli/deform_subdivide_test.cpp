// `charkit deform subdivide` as a user runs it: the JSON summary, the exit
// statuses of bad options and inputs, and the same bytes whatever the thread
// count.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit {
namespace {

using clitest::read_text;

using clitest::quote;
using clitest::run_charkit;
using core::Json;

const std::filesystem::path kModel =
    std::filesystem::path(CHARKIT_TEST_DATA) / "models" / "RiggedSimple.glb";

class DeformSubdivideCli : public clitest::ScratchDir {};

TEST_F(DeformSubdivideCli, JsonSummaryAndThreadCountsGiveTheSameFile) {
  const auto one = dir_ / "one.glb";
  const auto two = dir_ / "two.glb";
  auto r = run_charkit("deform subdivide " + quote(kModel) + " -o " + quote(one) +
                       " --threads 1 --device cpu --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["meshes"].size(), 1U);
  const Json& m = j["meshes"][0];
  // Full strength: every edge splits and every triangle becomes four.
  EXPECT_EQ(m["edgesSplit"], m["edges"]);
  EXPECT_EQ(m["trianglesOut"].get<int>(), 4 * m["trianglesIn"].get<int>());
  EXPECT_GT(m["verticesOut"].get<int>(), m["verticesIn"].get<int>());
  auto r2 = run_charkit("deform subdivide " + quote(kModel) + " -o " + quote(two) +
                        " --threads 2 --device cpu -q");
  ASSERT_EQ(r2.exit_code, 0);
  EXPECT_EQ(read_text(one), read_text(two));
  // Strength 0: nothing splits.
  auto r3 = run_charkit("deform subdivide " + quote(kModel) + " -o " + quote(two) +
                        " --strength 0 --json");
  ASSERT_EQ(r3.exit_code, 0);
  EXPECT_EQ(Json::parse(r3.out)["meshes"][0]["edgesSplit"], 0);
}

TEST_F(DeformSubdivideCli, GpuAndCpuDevicesWriteTheSameFile) {
  auto info = run_charkit("gpu info --json");
  ASSERT_EQ(info.exit_code, 0);
  const Json devices = Json::parse(info.out)["devices"];
  if (devices.empty()) GTEST_SKIP() << "no Vulkan device";
  const auto cpu = dir_ / "cpu.glb";
  const auto gpu = dir_ / "gpu.glb";
  const std::string base = "deform subdivide " + quote(kModel) + " --reference 0,4,4 -o ";
  auto c = run_charkit(base + quote(cpu) + " --device cpu --json");
  auto g = run_charkit(base + quote(gpu) + " --device gpu --json");
  ASSERT_EQ(c.exit_code, 0);
  ASSERT_EQ(g.exit_code, 0) << g.out;
  EXPECT_EQ(Json::parse(c.out)["device"], "cpu");
  EXPECT_EQ(Json::parse(g.out)["device"], devices[0]["name"]);
  EXPECT_EQ(read_text(cpu), read_text(gpu));
  // CHARKIT_DEVICE decides when --device is absent; a bad value is a usage error.
  EXPECT_EQ(clitest::run_with_stderr("CHARKIT_DEVICE=tpu '" + std::string(CHARKIT_BIN) + "' " +
                                     base + quote(cpu))
                .exit_code,
            2);
}

// --device auto (the default) keeps small work on the CPU without opening a
// Vulkan device, and says why (gpu::auto_device_refusal's rule).
TEST_F(DeformSubdivideCli, AutoDeviceKeepsSmallWorkOnTheCpu) {
  auto r =
      clitest::run_with_stderr("'" + std::string(CHARKIT_BIN) + "' deform subdivide " +
                               quote(kModel) + " -o " + quote(dir_ / "a.glb") + " --device auto");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("device auto: cpu ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" vertices, under the 100000 the GPU is worth"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on the cpu device"), std::string::npos) << r.out;
}

TEST_F(DeformSubdivideCli, ExitStatuses) {
  const auto out = dir_ / "o.glb";
  const std::string base = "deform subdivide " + quote(kModel) + " -o ";
  EXPECT_EQ(run_charkit(base + quote(out) + " --strength 2").exit_code, 2);
  EXPECT_EQ(run_charkit(base + quote(out) + " --branch 2").exit_code, 2);
  EXPECT_EQ(run_charkit(base + quote(out) + " --reference 1,2").exit_code, 2);
  EXPECT_EQ(run_charkit(base + quote(dir_ / "o.gltf")).exit_code, 2);
  EXPECT_EQ(run_charkit(base + quote(out) + " --slope -1").exit_code, 2);
  EXPECT_EQ(
      run_charkit("deform subdivide " + quote(dir_ / "nope.glb") + " -o " + quote(out)).exit_code,
      2);
  auto bad = run_charkit(base + quote(out) + " --mesh nope --json");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("DEFORM_GLTF"), std::string::npos) << bad.out;
  const auto junk = write("junk.glb", {'g', 'l', 'T', 'F', 2, 0, 0, 0});
  EXPECT_EQ(run_charkit("deform subdivide " + quote(junk) + " -o " + quote(out)).exit_code, 1);
  // A BEM package, binary or ZIP, is named as one (it was reported as bad JSON).
  for (const char* pkg : {"example-1.5.bem", "example-1.5.zip"}) {
    const auto path = std::filesystem::path(CHARKIT_EXAMPLES_DIR) / pkg;
    auto r = run_charkit("deform subdivide " + quote(path) + " -o " + quote(out) + " --json");
    EXPECT_EQ(r.exit_code, 2) << pkg;
    EXPECT_NE(r.out.find("DEFORM_INPUT_PACKAGE"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace charkit
