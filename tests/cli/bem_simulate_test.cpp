// `charkit bem simulate`: the real program on 1.5 packages built by hand; the
// expected lines are the worked examples of docs/bem/runtime.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "cli_support.h"
#include "package_builder.h"

namespace charkit {
namespace {

using clitest::quote;
using clitest::run_charkit;
using core::Json;
using testkit::ByteVec;

ByteVec delta_payload() {
  const std::string j = R"({"count":1,"encoding":"sparse-position-f32"})";
  ByteVec b = testkit::u32_bytes({static_cast<std::uint32_t>(j.size())});
  b.insert(b.end(), j.begin(), j.end());
  ByteVec v = testkit::u32_bytes({1});
  ByteVec d = testkit::f32_bytes({0.5F, 0, 0});
  b.insert(b.end(), v.begin(), v.end());
  b.insert(b.end(), d.begin(), d.end());
  return b;
}

// The 1.5 baseline plus parameter body (0..1000, a channel on mesh 0), a
// static _Alpha 0.5 on the draw, sound bytes (payload 6) and `drivers`.
testkit::TestPackage package(Json drivers) {
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json& m = p.manifest;
  for (const char* cap :
       {"body-parameters", "mesh-position-deltas", "material-overrides-v1", "dynamic-drivers-v1"})
    m["required_capabilities"].push_back(cap);
  m["parameters"] = Json::parse(
      R"([{"id": "body", "name": "Body", "min": 0, "max": 1000, "neutral": 0, "default": 0, "step": 1}])");
  m["mesh_deformations"] = Json::parse(
      R"([{"mesh": 0, "parameter": "body", "frames": [{"value": 0, "neutral": true},
          {"value": 1000, "payload": 5, "count": 1, "encoding": "sparse-position-f32"}]}])");
  m["meshes"][0]["draws"][0]["material_overrides"] = Json{{"floats", Json{{"_Alpha", 0.5}}}};
  p.payloads.push_back(delta_payload());    // 5
  p.payloads.push_back(ByteVec(32, 0x4F));  // 6: sound bytes
  m["drivers"] = std::move(drivers);
  return p;
}

Json driver(const std::string& waveform, const std::string& playback) {
  return Json{{"id", "d"},
              {"waveform", waveform},
              {"playback", playback},
              {"base_frequency", 1.0},
              {"bindings", Json::array({Json{{"type", "morph_parameter"}, {"target", "body"}}})}};
}

class SimulateCli : public clitest::ScratchDir {
 protected:
  std::vector<Json> lines(const testkit::TestPackage& p, const std::string& args,
                          int want_exit = 0) {
    auto path = write("p.bem", p.binary());
    auto r = run_charkit("bem simulate " + quote(path) + " " + args);
    EXPECT_EQ(r.exit_code, want_exit) << r.out;
    std::vector<Json> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      Json j = Json::parse(line, nullptr, false);
      EXPECT_FALSE(j.is_discarded()) << line;
      out.push_back(std::move(j));
    }
    return out;
  }
  /// A package with one looping sawtooth driver "d", started at 0: the
  /// arguments of `bem simulate` over 3 steps of 0.25 s.
  std::string sawtooth_args() {
    auto path = write("p.bem", package(Json::array({driver("sawtooth", "loop")})).binary());
    return "bem simulate " + quote(path) + " --dt 0.25 --steps 3 --events 0:start:d";
  }
  std::vector<int> ticks(const std::string& waveform, const std::string& playback,
                         const std::string& events, const std::string& params = "") {
    auto ls = lines(package(Json::array({driver(waveform, playback)})),
                    "--dt 0.25 --steps 5 --events '" + events + "'" +
                        (params.empty() ? "" : " --parameters " + params));
    std::vector<int> t;
    for (const Json& j : ls) t.push_back(j["parameters"]["body"].get<int>());
    return t;
  }
};

TEST_F(SimulateCli, WorkedExamplesOfEveryWaveformAndPlayback) {
  using V = std::vector<int>;
  EXPECT_EQ(ticks("pingpong", "loop", "0:start:d"), (V{0, 500, 1000, 500, 0, 500}));
  EXPECT_EQ(ticks("sine", "loop", "0:start:d"), (V{0, 500, 1000, 500, 0, 500}));
  EXPECT_EQ(ticks("sawtooth", "loop", "0:start:d"), (V{0, 250, 500, 750, 0, 250}));
  EXPECT_EQ(ticks("step", "loop", "0:start:d"), (V{0, 0, 1000, 1000, 0, 0}));
  EXPECT_EQ(ticks("sawtooth", "once", "0:start:d"), (V{0, 250, 500, 750, 1000, 1000}));
  EXPECT_EQ(ticks("pingpong", "once", "0:start:d"), (V{0, 500, 1000, 500, 0, 0}));
  EXPECT_EQ(ticks("sawtooth", "loop", "0:start:d&0.5:pause:d&1:start:d"),
            (V{0, 250, 500, 500, 500, 750}));
  EXPECT_EQ(ticks("sawtooth", "loop", "0:start:d&0.5:stop:d", "body:300"),
            (V{0, 250, 300, 300, 300, 300}));
  // jitter: a fixed function of floor(phase * 64); two runs give one curve.
  const V j1 = ticks("jitter", "loop", "0:start:d");
  EXPECT_EQ(j1, ticks("jitter", "loop", "0:start:d"));
  EXPECT_EQ(j1[0], 0);
  EXPECT_EQ(j1[4], 0);                                                         // phase 0 again
  EXPECT_EQ(j1[5], j1[1]);                                                     // phase 0.25 again
  EXPECT_EQ(j1[2], static_cast<int>(std::lround(1000 * 0.9176558944648652)));  // H(32)
}

TEST_F(SimulateCli, LinesCarryStatesMaterialsAndSounds) {
  Json d = driver("sawtooth", "once");
  d["sound"] = Json{{"payload", 6}, {"format", "ogg"}, {"gain", 0.8}, {"loop", false}};
  Json glow{{"id", "glow"},
            {"waveform", "sine"},
            {"base_frequency", 1.0},
            {"default_playing", true},
            {"bindings", Json::array({Json{{"type", "material_float"},
                                           {"component", 0},
                                           {"material_slot", 0},
                                           {"property", "_Alpha"},
                                           {"range", Json::array({0.0, 1.5})}}})}};
  auto ls =
      lines(package(Json::array({d, glow})), "--dt 0.5 --steps 4 --events '0:start:d&1:stop:glow'");
  ASSERT_EQ(ls.size(), 5u);
  EXPECT_EQ(ls[0]["step"], 0);
  EXPECT_EQ(ls[0]["time"], 0.0);
  EXPECT_EQ(ls[0]["drivers"][0]["state"], "playing");
  EXPECT_EQ(ls[0]["drivers"][1]["state"], "playing");  // default_playing
  ASSERT_EQ(ls[0]["sounds"].size(), 1u);
  EXPECT_EQ(ls[0]["sounds"][0]["event"], "start");
  EXPECT_EQ(ls[0]["sounds"][0]["payload"], 6);
  EXPECT_EQ(ls[0]["sounds"][0]["gain"], 0.8);
  // t = 0.5: sine at phase 0.5, w 1: _Alpha = 1.5 from the driver.
  EXPECT_EQ(ls[1]["drivers"][1]["w"], 1.0);
  EXPECT_EQ(ls[1]["drivers"][1]["bindings"][0]["value"], 1.5);
  EXPECT_EQ(ls[1]["materials"][0]["property"], "_Alpha");
  EXPECT_EQ(ls[1]["materials"][0]["source"], "driver");
  // t = 1: d finished (once, sawtooth at 1000) and its sound stopped; glow
  // stopped, so _Alpha is back at the draw's static 0.5.
  EXPECT_EQ(ls[2]["drivers"][0]["state"], "finished");
  EXPECT_EQ(ls[2]["parameters"]["body"], 1000);
  ASSERT_EQ(ls[2]["sounds"].size(), 1u);
  EXPECT_EQ(ls[2]["sounds"][0]["event"], "stop");
  EXPECT_EQ(ls[2]["drivers"][1]["state"], "stopped");
  EXPECT_EQ(ls[2]["drivers"][1]["bindings"], Json::array());
  EXPECT_EQ(ls[2]["materials"][0]["value"], 0.5);
  EXPECT_EQ(ls[2]["materials"][0]["source"], "static");
  EXPECT_EQ(ls[4]["parameters"]["body"], 1000);
}

TEST_F(SimulateCli, UnpackNamesADriversSoundByItsFormat) {
  Json d = driver("sine", "loop");
  d["id"] = "../thrust loop";  // no path out of sounds/
  d["sound"] = Json{{"payload", 6}, {"format", "ogg"}};
  auto path = write("p.bem", package(Json::array({d})).binary());
  const auto out = dir_ / "unpacked";
  auto r = run_charkit("bem unpack " + quote(path) + " " + quote(out) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Json::parse(r.out)["sounds"], 1);
  const auto sound = out / "sounds" / "sound_6.ogg";  // a leading dot: named by payload
  ASSERT_TRUE(std::filesystem::exists(sound));
  EXPECT_EQ(std::filesystem::file_size(sound), 32u);  // the payload's bytes
  EXPECT_TRUE(std::filesystem::exists(out / "payloads" / "0006.bin"));
}

// `-o -` is standard output, as for every other command: the same lines as
// without -o, and no file named "-".
TEST_F(SimulateCli, DashOutputIsStandardOutput) {
  const std::string args = sawtooth_args();
  auto plain = run_charkit(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  // In the scratch folder, so that a file named "-" would land there.
  auto dash = clitest::run_with_stderr("(cd " + quote(dir_) + " && '" + CHARKIT_BIN + "' " + args +
                                       " -o - 2>/dev/null)");
  ASSERT_EQ(dash.exit_code, 0) << dash.out;
  EXPECT_EQ(dash.out, plain.out);
  EXPECT_EQ(std::count(plain.out.begin(), plain.out.end(), '\n'), 4);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "-"));
}

// --json never mixes a document into the NDJSON: with the lines on stdout the
// summary goes to stderr; with -o FILE it is stdout's one document.
TEST_F(SimulateCli, JsonSummaryKeepsStandardOutputNdjson) {
  const std::string args = sawtooth_args();
  auto plain = run_charkit(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  auto json = run_charkit(args + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  EXPECT_EQ(json.out, plain.out);  // only the four NDJSON lines
  const auto err = dir_ / "stderr.txt";
  ASSERT_EQ(clitest::run_with_stderr("('" + std::string(CHARKIT_BIN) + "' " + args + " --json 2>" +
                                     quote(err) + " >/dev/null)")
                .exit_code,
            0);
  Json summary = Json::parse(clitest::read_text(err), nullptr, false);
  ASSERT_FALSE(summary.is_discarded()) << clitest::read_text(err);
  EXPECT_EQ(summary["lines"], 4);
  EXPECT_EQ(summary["output"], "-");
  EXPECT_EQ(summary["drivers"], Json::array({"d"}));

  auto to_file = run_charkit(args + " --json -o " + quote(dir_ / "out.ndjson"));
  ASSERT_EQ(to_file.exit_code, 0) << to_file.out;
  Json doc = Json::parse(to_file.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << to_file.out;
  EXPECT_EQ(doc["ok"], true);
  EXPECT_EQ(doc["lines"], 4);
  EXPECT_EQ(clitest::read_text(dir_ / "out.ndjson"), plain.out);
}

TEST_F(SimulateCli, PositionsFollowTheDrivenTicks) {
  // body's frame at 1000 moves vertex 1 by (0.5, 0, 0): at tick 250 by 0.125.
  auto ls = lines(package(Json::array({driver("sawtooth", "loop")})),
                  "--dt 0.25 --steps 2 --positions --events '0:start:d&0.5:stop:d'");
  ASSERT_EQ(ls.size(), 3u);
  ASSERT_EQ(ls[0]["positions"].size(), 1u);
  EXPECT_EQ(ls[0]["positions"][0]["mesh"], 0);
  const Json& p0 = ls[0]["positions"][0]["positions"];
  const Json& p1 = ls[1]["positions"][0]["positions"];
  const Json& p2 = ls[2]["positions"][0]["positions"];
  ASSERT_EQ(p0.size(), p1.size());
  ASSERT_GT(p0.size(), 5u);
  for (std::size_t k = 0; k < p0.size(); ++k) {
    const double d = p1[k].get<double>() - p0[k].get<double>();
    EXPECT_NEAR(d, k == 3 ? 0.125 : 0.0, 1e-6) << "component " << k;
    EXPECT_EQ(p2[k], p0[k]) << "stopped: back at the manual tick 0";
  }
}

TEST_F(SimulateCli, BadEventsAndOptionsAreUsageErrors) {
  auto p = package(Json::array({driver("sine", "loop")}));
  auto path = write("p.bem", p.binary());
  auto r = run_charkit("bem simulate " + quote(path) + " --events '0:start:nope'", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("BEM_SIMULATE_EVENTS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the package's drivers: 'd'"), std::string::npos) << r.out;
  r = run_charkit("bem simulate " + quote(path) + " --events '0:jump:d'", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown action"), std::string::npos) << r.out;
  r = run_charkit("bem simulate " + quote(path) + " --events '1:speed:d'", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run_charkit("bem simulate " + quote(path) + " --dt 0", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("BEM_SIMULATE_OPTIONS"), std::string::npos) << r.out;
  // Speed is clamped to the live range and does not move the phase.
  auto ls = lines(p, "--dt 0.25 --steps 2 --events '0:start:d&0.25:speed:d:9'");
  ASSERT_EQ(ls.size(), 3u);
  EXPECT_EQ(ls[1]["drivers"][0]["phase"], 0.25);
  EXPECT_EQ(ls[1]["drivers"][0]["speed"], 4.0);
  EXPECT_EQ(ls[2]["drivers"][0]["phase"], 0.25);  // 0.25 + 0.25 * 4 = 1.25 -> 0.25
}

}  // namespace
}  // namespace charkit
