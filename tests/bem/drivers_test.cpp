// §13 drivers at run time (bem/drivers.h): waveforms, the runtime's reading
// of the manifest (what it drops), the state machine, the bindings' outputs
// and the release rules, on a valid 1.5 package built by the test kit.
#include "charkit/bem/drivers.h"

#include <cmath>
#include <numbers>
#include <string>

#include <gtest/gtest.h>

#include "charkit/bem/export_gltf.h"
#include "charkit/bem/load.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/settings.h"
#include "charkit/core/json.h"
#include "morph_test_support.h"

using namespace charkit;
using namespace charkit::bem;
using namespace charkit::morphtest;

namespace {

Json morph_driver(const std::string& id, const std::string& waveform, const std::string& playback,
                  double f, Json range = Json::array({0.0, 1.0})) {
  return Json{
      {"id", id},
      {"waveform", waveform},
      {"playback", playback},
      {"base_frequency", f},
      {"bindings",
       Json::array(
           {Json{{"type", "morph_parameter"}, {"target", "body"}, {"range", std::move(range)}}})}};
}

/// Payload index of the sound bytes load_with adds (after with_morph's frame).
constexpr std::uint32_t kSoundPayload = kFramePayload + 1;

/// A valid 1.5 package (slider "body" 0..1000, static overrides on mesh 0
/// draw 0: _Alpha 0.5 and keyword _ALPHATEST_ON, sound bytes) with the given drivers.
struct Loaded {
  ByteVec bytes;
  LoadedPackage pkg;
};
std::unique_ptr<Loaded> load_with(Json drivers) {
  testkit::TestPackage p = with_morph(5);
  Json& m = p.manifest;
  for (const char* cap : {"material-overrides-v1", "dynamic-drivers-v1"})
    m["required_capabilities"].push_back(cap);
  m["meshes"][0]["draws"][0]["material_overrides"] =
      Json{{"floats", Json{{"_Alpha", 0.5}}}, {"enable_keywords", Json::array({"_ALPHATEST_ON"})}};
  m["drivers"] = std::move(drivers);
  p.payloads.push_back(ByteVec(32, 0x4F));  // kSoundPayload
  auto out = std::make_unique<Loaded>();
  out->bytes = p.binary();
  out->pkg = load_package(core::Bytes(out->bytes));
  EXPECT_TRUE(out->pkg.ok()) << out->pkg.error << "\n" << out->pkg.validation.report.to_text("pkg");
  return out;
}

DriverRuntime runtime_of(const Loaded& l, std::uint32_t manual_tick = 0) {
  const Model& model = *l.pkg.model;
  auto plan = make_plan(model, default_settings(model), {});
  EXPECT_TRUE(plan) << plan.error().to_string();
  return DriverRuntime(read_drivers(l.pkg.manifest, model), model, {manual_tick},
                       static_materials(model, *plan));
}

}  // namespace

TEST(DriverWaveforms, TheTableOfSection13) {
  for (Waveform w : {Waveform::kPingpong, Waveform::kSine, Waveform::kJitter, Waveform::kSawtooth,
                     Waveform::kStep})
    EXPECT_EQ(waveform_value(w, 0.0), 0.0) << waveform_name(w);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kPingpong, 0.25), 0.5);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kPingpong, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kPingpong, 0.75), 0.5);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kPingpong, 1.0), 0.0);  // once: back at the start
  EXPECT_NEAR(waveform_value(Waveform::kSine, 0.25), 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kSine, 0.5), 1.0);
  EXPECT_NEAR(waveform_value(Waveform::kSine, 1.0), 0.0, 1e-15);
  EXPECT_NEAR(waveform_value(Waveform::kSine, 0.1),
              (1.0 - std::cos(2.0 * std::numbers::pi * 0.1)) / 2.0, 1e-15);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kSawtooth, 0.3), 0.3);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kSawtooth, 1.0), 1.0);  // once: stays at the end
  EXPECT_EQ(waveform_value(Waveform::kStep, 0.49), 0.0);
  EXPECT_EQ(waveform_value(Waveform::kStep, 0.5), 1.0);
  EXPECT_EQ(waveform_value(Waveform::kStep, 1.0), 1.0);
}

TEST(DriverWaveforms, JitterIsAFixedFunctionOfTheQuantisedPhase) {
  // SplitMix64 of floor(p * 64), top 53 bits (values from an independent
  // Python implementation of SplitMix64).
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kJitter, 1.0 / 64), 0.5665615751722809);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kJitter, 0.5), 0.9176558944648652);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kJitter, 63.5 / 64), 0.5486460678919388);
  EXPECT_DOUBLE_EQ(waveform_value(Waveform::kJitter, 1.0), 0.8382331302817879);
  // Constant within a step, in [0, 1).
  EXPECT_EQ(waveform_value(Waveform::kJitter, 0.5), waveform_value(Waveform::kJitter, 0.51));
  for (int k = 1; k < 64; ++k) {
    const double v = waveform_value(Waveform::kJitter, (k + 0.5) / 64.0);
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(DriverRead, DefaultsAndWhatTheRuntimeDrops) {
  Json drivers = Json::array();
  drivers.push_back(
      Json{{"id", "plain"},
           {"bindings", Json::array({Json{{"type", "blend_shape"}, {"target", "body"}}})}});
  drivers.push_back(morph_driver("bad_wave", "square", "loop", 1.0));
  drivers.push_back(morph_driver("bad_playback", "sine", "bounce", 1.0));
  Json mixed = morph_driver("mixed", "sine", "loop", 1.0);
  mixed["bindings"].push_back(Json{{"type", "material_vector"}, {"property", "_X"}});
  drivers.push_back(mixed);
  // The validator refuses unknown waveforms and playbacks; the runtime
  // reads such a manifest (skip_validation, a newer writer) and drops them.
  bem::Model model;
  model.parameters.push_back(Parameter{"body", "Body", 0, 1000, 0, 0, 1, std::nullopt});
  DriverSet set = read_drivers(Json{{"drivers", drivers}}, model);
  ASSERT_EQ(set.drivers.size(), 2u);
  const Driver& plain = set.drivers[0];
  EXPECT_EQ(plain.id, "plain");
  EXPECT_EQ(plain.name, "plain");  // falls back to the id
  EXPECT_EQ(plain.waveform, Waveform::kPingpong);
  EXPECT_EQ(plain.playback, Playback::kLoop);
  EXPECT_FALSE(plain.default_playing);
  EXPECT_EQ(plain.speed_multiplier, 1.0);
  ASSERT_EQ(plain.bindings.size(), 1u);  // blend_shape = morph_parameter
  EXPECT_EQ(plain.bindings[0].type, BindingType::kMorphParameter);
  EXPECT_EQ(plain.bindings[0].low, 0.0);
  EXPECT_EQ(plain.bindings[0].high, 1.0);
  EXPECT_EQ(set.drivers[1].id, "mixed");
  EXPECT_EQ(set.drivers[1].bindings.size(), 1u);  // the unknown binding type is dropped
  ASSERT_EQ(set.log.size(), 3u);
  EXPECT_NE(set.log[0].find("unknown waveform \"square\""), std::string::npos) << set.log[0];
  EXPECT_NE(set.log[1].find("unknown playback \"bounce\""), std::string::npos) << set.log[1];
  EXPECT_NE(set.log[2].find("unknown type \"material_vector\""), std::string::npos) << set.log[2];
}

TEST(DriverRead, QuotasDropTheExcess) {
  // The validator refuses these packages; the runtime reads them anyway
  // (skip_validation, or a newer writer) and drops what is over the quota.
  Json drivers = Json::array();
  for (int i = 0; i < 18; ++i) {
    Json d = morph_driver("d" + std::to_string(i), "sine", "loop", 1.0);
    if (i < 10) d["sound"] = Json{{"payload", 0}, {"format", "ogg"}};
    drivers.push_back(d);
  }
  Json many = Json::array();
  for (int k = 0; k < 40; ++k)
    many.push_back(Json{{"type", "morph_parameter"}, {"target", "body"}});
  drivers[0]["bindings"] = many;
  bem::Model model;
  model.parameters.push_back(Parameter{"body", "Body", 0, 1000, 0, 0, 1, std::nullopt});
  DriverSet set = read_drivers(Json{{"drivers", drivers}}, model);
  ASSERT_EQ(set.drivers.size(), kMaxDrivers);
  EXPECT_EQ(set.drivers[0].bindings.size(), kMaxDriverBindings);
  std::size_t sounds = 0;
  for (const Driver& d : set.drivers) sounds += d.sound ? 1 : 0;
  EXPECT_EQ(sounds, kMaxDriverSounds);
  // 8 bindings, 2 sounds, 2 drivers dropped, each logged.
  EXPECT_EQ(set.log.size(), 8u + 2u + 2u);
  EXPECT_NE(set.log.back().find("more than 16 drivers"), std::string::npos) << set.log.back();
}

TEST(DriverRuntime, LoopPingpongMapsWOntoTheTickDomain) {
  auto l = load_with(
      Json::array({morph_driver("thrust", "pingpong", "loop", 1.0, Json::array({0.2, 0.8}))}));
  DriverRuntime rt = runtime_of(*l, 300);
  RuntimeFrame f = rt.frame();
  EXPECT_EQ(f.drivers[0].state, DriverState::kStopped);
  EXPECT_TRUE(f.drivers[0].outputs.empty());
  EXPECT_EQ(f.ticks[0], 300u);  // the manual tick while undriven
  EXPECT_FALSE(f.driven[0]);
  rt.start(0);
  f = rt.frame();
  // Phase 0: w 0, tick = round(0 + (0.2 + 0.6 * 0) * 1000) = 200: driven from the start.
  EXPECT_EQ(f.drivers[0].state, DriverState::kPlaying);
  EXPECT_EQ(f.ticks[0], 200u);
  EXPECT_TRUE(f.driven[0]);
  rt.step(0.25);  // phase 0.25, w 0.5 -> 0.2 + 0.3 = 0.5 -> 500
  f = rt.frame();
  EXPECT_DOUBLE_EQ(f.drivers[0].phase, 0.25);
  EXPECT_DOUBLE_EQ(f.drivers[0].w, 0.5);
  EXPECT_EQ(f.drivers[0].outputs[0].tick, 500u);
  rt.step(0.25);  // phase 0.5, w 1 -> 800
  EXPECT_EQ(rt.frame().ticks[0], 800u);
  rt.step(0.6);  // loop: phase 1.1 -> 0.1, w 0.2 -> 0.32 -> 320
  f = rt.frame();
  EXPECT_NEAR(f.drivers[0].phase, 0.1, 1e-12);
  EXPECT_EQ(f.ticks[0], 320u);
  // Speed: clamped to the live range, the phase does not move.
  rt.set_speed(0, 10.0);
  EXPECT_EQ(rt.frame().drivers[0].speed, 4.0);
  EXPECT_NEAR(rt.frame().drivers[0].phase, 0.1, 1e-12);
  rt.set_speed(0, 0.1);
  EXPECT_EQ(rt.frame().drivers[0].speed, 0.25);
  rt.step(1.0);  // 0.1 + 1 * 1 * 0.25
  EXPECT_NEAR(rt.frame().drivers[0].phase, 0.35, 1e-12);
  // Pause keeps delivering the frozen phase; stop releases to the manual tick.
  rt.pause(0);
  rt.step(1.0);
  f = rt.frame();
  EXPECT_EQ(f.drivers[0].state, DriverState::kPaused);
  EXPECT_NEAR(f.drivers[0].phase, 0.35, 1e-12);
  EXPECT_TRUE(f.driven[0]);
  rt.stop(0);
  f = rt.frame();
  EXPECT_EQ(f.drivers[0].state, DriverState::kStopped);
  EXPECT_EQ(f.drivers[0].phase, 0.0);
  EXPECT_EQ(f.ticks[0], 300u);
  EXPECT_FALSE(f.driven[0]);
}

TEST(DriverRuntime, OnceClampsAtOneFinishesAndRestarts) {
  Json d = morph_driver("push", "sawtooth", "once", 0.5);
  d["sound"] = Json{{"payload", kSoundPayload}, {"format", "ogg"}, {"loop", false}};
  auto l = load_with(Json::array({d}));
  DriverRuntime rt = runtime_of(*l);
  rt.start(0);
  RuntimeFrame f = rt.frame();
  ASSERT_EQ(f.sounds.size(), 1u);
  EXPECT_TRUE(f.sounds[0].start);
  rt.step(1.0);  // phase 0.5 (duration 1 / 0.5 = 2 s)
  EXPECT_EQ(rt.frame().ticks[0], 500u);
  rt.step(1.5);  // 0.5 + 0.75 -> clamped at 1
  f = rt.frame();
  EXPECT_EQ(f.drivers[0].state, DriverState::kFinished);
  EXPECT_EQ(f.drivers[0].phase, 1.0);
  EXPECT_EQ(f.ticks[0], 1000u);  // sawtooth stays at the end, still delivered
  ASSERT_EQ(f.sounds.size(), 1u);
  EXPECT_FALSE(f.sounds[0].start);  // the sound stops when once finishes
  rt.step(5.0);
  EXPECT_EQ(rt.frame().ticks[0], 1000u);
  rt.pause(0);  // pause does not apply to a finished driver
  EXPECT_EQ(rt.frame().drivers[0].state, DriverState::kFinished);
  rt.start(0);  // start from finished: phase back to 0
  f = rt.frame();
  EXPECT_EQ(f.drivers[0].state, DriverState::kPlaying);
  EXPECT_EQ(f.drivers[0].phase, 0.0);
  EXPECT_EQ(f.ticks[0], 0u);
}

TEST(DriverRuntime, ToggleIsStartOrStopAndPingpongOnceEndsAtTheStart) {
  auto l = load_with(Json::array({morph_driver("out_and_back", "pingpong", "once", 1.0)}));
  DriverRuntime rt = runtime_of(*l, 0);
  rt.toggle(0);
  EXPECT_EQ(rt.frame().drivers[0].state, DriverState::kPlaying);
  rt.step(0.5);
  EXPECT_EQ(rt.frame().ticks[0], 1000u);
  rt.pause(0);
  rt.toggle(0);  // paused -> stopped (the hotkey never pauses)
  EXPECT_EQ(rt.frame().drivers[0].state, DriverState::kStopped);
  rt.toggle(0);
  rt.step(2.0);
  RuntimeFrame f = rt.frame();
  EXPECT_EQ(f.drivers[0].state, DriverState::kFinished);
  EXPECT_EQ(f.ticks[0], 0u);  // pingpong's once end is back at the start
  rt.toggle(0);               // finished -> stopped
  EXPECT_EQ(rt.frame().drivers[0].state, DriverState::kStopped);
}

TEST(DriverRuntime, MaterialsAreDrivenThenReleasedToStaticOrLowerBound) {
  Json glow{
      {"id", "glow"},
      {"waveform", "sine"},
      {"base_frequency", 1.0},
      {"default_playing", true},
      {"bindings",
       Json::array(
           {Json{{"type", "material_float"},
                 {"component", 0},
                 {"material_slot", 0},
                 {"property", "_Alpha"},
                 {"range", Json::array({0.0, 1.5})}},
            Json{{"type", "material_float"},
                 {"component", 0},
                 {"property", "_EmissionWeight"},
                 {"range", Json::array({0.25, 2.0})}},
            Json{{"type", "material_color"},
                 {"component", 0},
                 {"property", "_EmissionColor"},
                 {"colors", Json::array({Json::array({0, 0, 0, 1}), Json::array({8, 4, 2, 1})})}},
            Json{{"type", "material_keyword"},
                 {"component", 0},
                 {"keyword", "_ALPHATEST_ON"},
                 {"threshold", 0.4}},
            Json{{"type", "material_keyword"}, {"component", 0}, {"keyword", "_EMISSION"}}})}};
  auto l = load_with(Json::array({glow}));
  DriverRuntime rt = runtime_of(*l);
  RuntimeFrame f = rt.frame();
  EXPECT_EQ(f.drivers[0].state, DriverState::kPlaying);  // default_playing
  rt.step(0.25);                                         // sine at 0.25: w 0.5
  f = rt.frame();
  ASSERT_EQ(f.materials.size(), 5u);
  const auto& out = f.drivers[0].outputs;
  EXPECT_NEAR(out[0].value, 0.75, 1e-12);
  EXPECT_NEAR(out[1].value, 1.125, 1e-12);
  EXPECT_NEAR(out[2].color[0], 4.0, 1e-12);
  EXPECT_NEAR(out[2].color[1], 2.0, 1e-12);
  EXPECT_NEAR(out[2].color[3], 1.0, 1e-12);
  EXPECT_TRUE(out[3].enabled);   // 0.5 > 0.4
  EXPECT_FALSE(out[4].enabled);  // 0.5 > 0.5 is false
  for (const MaterialValue& m : f.materials) EXPECT_TRUE(m.driven) << m.name;
  rt.stop(0);
  f = rt.frame();
  EXPECT_TRUE(f.drivers[0].outputs.empty());
  // Released: _Alpha replays the draw's static 0.5; _EmissionWeight its lower
  // bound; the colour its first colour; _ALPHATEST_ON the static enable;
  // _EMISSION off.
  EXPECT_EQ(f.materials[0].name, "_Alpha");
  EXPECT_EQ(f.materials[0].value, 0.5);
  EXPECT_TRUE(f.materials[0].from_static);
  EXPECT_EQ(f.materials[1].value, 0.25);
  EXPECT_FALSE(f.materials[1].from_static);
  EXPECT_EQ(f.materials[2].color, (std::array<double, 4>{0, 0, 0, 1}));
  EXPECT_TRUE(f.materials[3].enabled);
  EXPECT_TRUE(f.materials[3].from_static);
  EXPECT_FALSE(f.materials[4].enabled);
  for (const MaterialValue& m : f.materials) EXPECT_FALSE(m.driven) << m.name;
}

TEST(DriverRuntime, TheLaterDriverOfAParameterWins) {
  auto l = load_with(Json::array(
      {morph_driver("a", "sawtooth", "loop", 1.0), morph_driver("b", "step", "loop", 1.0)}));
  DriverRuntime rt = runtime_of(*l);
  rt.start(0);
  rt.start(1);
  rt.step(0.25);
  RuntimeFrame f = rt.frame();
  EXPECT_EQ(f.drivers[0].outputs[0].tick, 250u);
  EXPECT_EQ(f.drivers[1].outputs[0].tick, 0u);
  EXPECT_EQ(f.ticks[0], 0u);  // b, later in manifest order
  rt.stop(1);
  EXPECT_EQ(rt.frame().ticks[0], 250u);
  EXPECT_EQ(rt.find("b"), 1);
  EXPECT_EQ(rt.find("c"), -1);
}

TEST(DriverControls, EventsParseSortAndSayWhatIsWrong) {
  auto l = load_with(Json::array(
      {morph_driver("a", "sawtooth", "loop", 1.0), morph_driver("b", "sine", "loop", 1.0)}));
  DriverRuntime rt = runtime_of(*l);
  auto ev = parse_driver_events("2:stop:a&0.5:speed:b:1.5&0.5:start:b&0:toggle:a", rt.drivers());
  ASSERT_TRUE(ev) << ev.error().to_string();
  ASSERT_EQ(ev->size(), 4u);
  // By time; equal times keep their order (speed before start at 0.5).
  EXPECT_EQ((*ev)[0].action, DriverAction::kToggle);
  EXPECT_EQ((*ev)[0].column, 38u);
  EXPECT_EQ((*ev)[1].action, DriverAction::kSpeed);
  EXPECT_EQ((*ev)[1].driver, 1u);
  EXPECT_EQ((*ev)[1].arg, 1.5);
  EXPECT_EQ((*ev)[2].action, DriverAction::kStart);
  EXPECT_EQ((*ev)[3].time, 2.0);
  EXPECT_TRUE(parse_driver_events("", rt.drivers())->empty());

  struct Bad {
    const char* text;
    const char* says;
    std::size_t column;
  };
  for (const Bad& b : {Bad{"0:start", "3 or 4 fields", 1}, Bad{"0:start:a&x:stop:a", "time", 11},
                       Bad{"-1:start:a", "time", 1}, Bad{"0:jump:a", "unknown action 'jump'", 1},
                       Bad{"0:start:zz", "no driver 'zz' (the package's drivers: 'a', 'b')", 1},
                       Bad{"0:speed:a", "needs a value", 1},
                       Bad{"0:speed:a:fast", "not a number", 1}, Bad{"0:stop:a:2", "only speed", 1},
                       Bad{"0:start:a:b:c", "3 or 4", 1}, Bad{"inf:start:a", "time", 1}}) {
    auto r = parse_driver_events(b.text, rt.drivers());
    ASSERT_FALSE(r) << b.text;
    EXPECT_EQ(r.error().code, "BEM_SIMULATE_EVENTS");
    EXPECT_NE(r.error().message.find(b.says), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().location.offset, b.column) << b.text;
  }
  // A byte that is not UTF-8 is quoted as \xHH.
  auto r = parse_driver_events("0:start:\xff", rt.drivers());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("'\\xFF'"), std::string::npos) << r.error().message;
}

TEST(DriverControls, ControlMessagesApplyLikeTheEvents) {
  auto l = load_with(Json::array({morph_driver("a", "sawtooth", "loop", 1.0)}));
  DriverRuntime rt = runtime_of(*l);
  auto c = parse_driver_control(R"({"action": "speed", "driver": "a", "value": 8})", rt.drivers());
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->action, DriverAction::kSpeed);
  EXPECT_EQ(c->arg, 8.0);
  apply_driver_control(rt, c->action, c->driver, c->arg);
  apply_driver_control(rt, DriverAction::kStart, 0);
  rt.step(0.1);
  const RuntimeFrame f = rt.frame();
  EXPECT_EQ(f.drivers[0].speed, 4.0);  // the live range's top
  EXPECT_NEAR(f.drivers[0].phase, 0.4, 1e-12);
  EXPECT_EQ(f.ticks[0], 400u);

  for (const char* bad :
       {"", "[]", "{}", R"({"action": 1, "driver": "a"})", R"({"action": "jump", "driver": "a"})",
        R"({"action": "start"})", R"({"action": "start", "driver": "b"})",
        R"({"action": "speed", "driver": "a"})",
        R"({"action": "speed", "driver": "a", "value": "2"})",
        R"({"action": "stop", "driver": "a", "value": 2})"}) {
    auto r = parse_driver_control(bad, rt.drivers());
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, "BEM_DRIVER_CONTROL") << bad;
  }
  EXPECT_FALSE(parse_driver_control(std::string(5000, ' ') + "{}", rt.drivers()));
}

TEST(DriverControls, TheFrameJsonIsTheLineFormat) {
  auto l = load_with(Json::array({morph_driver("a", "pingpong", "loop", 1.0)}));
  DriverRuntime rt = runtime_of(*l, 7);
  rt.start(0);
  rt.step(0.25);
  const RuntimeFrame f = rt.frame();
  const Json j = runtime_frame_json(*l->pkg.model, rt, f);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"drivers", "parameters", "materials", "sounds"}));
  EXPECT_EQ(j["drivers"][0]["id"], "a");
  EXPECT_EQ(j["drivers"][0]["state"], "playing");
  EXPECT_EQ(j["drivers"][0]["w"], 0.5);
  EXPECT_EQ(j["drivers"][0]["bindings"][0], Json::parse(R"({"type": "morph_parameter",
      "target": "body", "tick": 500})"));
  EXPECT_EQ(j["parameters"], Json::parse(R"({"body": 500})"));
}

TEST(DriverPreview, FrameWeightsAndTheExportsMorphTargetOrder) {
  Deformation def;
  def.frames = {{0, true, 0, 0}, {400, false, 5, 1}, {1000, false, 6, 1}};
  using W = std::vector<std::pair<std::uint32_t, float>>;
  EXPECT_EQ(channel_frame_weights(def, 0), (W{{0, 1.0f}}));
  EXPECT_EQ(channel_frame_weights(def, 400), (W{{1, 1.0f}}));
  EXPECT_EQ(channel_frame_weights(def, 100), (W{{0, 0.75f}, {1, 0.25f}}));
  EXPECT_EQ(channel_frame_weights(def, 700), (W{{1, 0.5f}, {2, 0.5f}}));
  EXPECT_TRUE(channel_frame_weights(def, 1001).empty());

  // The export's targets: one per non-neutral frame (here the one at 1000).
  auto l = load_with(Json::array({morph_driver("a", "pingpong", "loop", 1.0)}));
  const Model& model = *l->pkg.model;
  PlanOptions po;
  po.all_frames = true;
  auto plan = make_plan(model, default_settings(model), po);
  ASSERT_TRUE(plan) << plan.error().to_string();
  using M = std::vector<std::vector<float>>;
  EXPECT_EQ(morph_target_weights(model, *plan, {0}), (M{{0.0f}}));
  EXPECT_EQ(morph_target_weights(model, *plan, {250}), (M{{0.25f}}));
  EXPECT_EQ(morph_target_weights(model, *plan, {1000}), (M{{1.0f}}));
  EXPECT_EQ(morph_target_weights(model, *plan, {}), (M{{0.0f}}));  // the plan's tick
  // The GLB's own default weights are the plan's ticks'.
  auto exported = export_glb(model, *l->pkg.package, default_settings(model), [] {
    ExportOptions o;
    o.morph_targets = true;
    return o;
  }());
  ASSERT_TRUE(exported) << exported.error().to_string();
  ASSERT_EQ(exported->result.scene.meshes.size(), 1u);
  ASSERT_EQ(exported->result.scene.meshes[0].targets.size(), 1u);
  EXPECT_EQ(exported->result.scene.meshes[0].targets[0].weight, 0.0f);
}
