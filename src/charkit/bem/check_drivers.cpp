// §13 (BEM 1.5, dynamic-drivers-v1): clock drivers, their bindings to morph
// parameters and material properties, and their optional embedded sound.
//
// Severity follows who rejects what (Q16): things the runtime silently drops
// (unknown waveform, playback or binding type; a sound beyond the 8 playing
// at once) are warnings; quotas that the spec says the tool must reject
// (more than 16 drivers) and everything malformed are errors.
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "charkit/bem/detail/check_v15.h"
#include "charkit/bem/drivers.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {

using core::json_pointer_join;

constexpr std::uint64_t kMinSoundBytes = 16;           // §13: sound payload 16 B ..
constexpr std::uint64_t kMaxSoundBytes = 32ull << 20;  //      .. 32 MiB

bool one_of(const std::string& s, std::initializer_list<const char*> set) {
  for (const char* x : set)
    if (s == x) return true;
  return false;
}

/// `range` / a colour pair: [low, high] within [lo, hi], low ≤ high (Q17:
/// low == high is allowed but holds a constant, so a warning).
void check_range(Context& ctx, const Json& b, const std::string& bp, double lo, double hi) {
  const Json* r = ctx.field(b, "range", bp, false, "§13");
  if (!r) return;
  const std::string rp = json_pointer_join(bp, "range");
  if (!r->is_array() || r->size() != 2) {
    ctx.error(codes::BEM_FIELD_TYPE, "§13", rp, "\"range\" must be a pair [low, high] of numbers");
    return;
  }
  auto low = core::json_finite_number((*r)[0]);
  auto high = core::json_finite_number((*r)[1]);
  if (!low || !high) {
    ctx.error(codes::BEM_FIELD_TYPE, "§13", rp, "\"range\" must be a pair [low, high] of numbers");
    return;
  }
  if (*low < lo || *high > hi || *low > hi || *high < lo)
    ctx.error(codes::BEM_DRIVER_RANGE, "§13", rp,
              "\"range\" [" + format_number(*low) + ", " + format_number(*high) +
                  "] must lie within [" + format_number(lo) + ", " + format_number(hi) + "]");
  if (*low > *high)
    ctx.error(codes::BEM_DRIVER_RANGE, "§13", rp,
              "\"range\" must be increasing: low " + format_number(*low) + " > high " +
                  format_number(*high));
  else if (*low == *high)
    ctx.warning(codes::BEM_DRIVER_RANGE_FLAT, "§13", rp,
                "\"range\" has low == high, so this binding holds one constant value");
}

/// material_*: `component` (default 0) and `material_slot` (default 0).
void check_material_target(Context& ctx, const Json& b, const std::string& bp) {
  auto comp = ctx.get_u32(b, "component", bp, false, 0, 0xFFFFFFFFu, "§13");
  auto slot = ctx.get_u32(b, "material_slot", bp, false, 0, 0xFFFFFFFFu, "§13");
  if (ctx.components.empty()) return;  // the target pass could not read components
  std::uint32_t c = comp.value_or(0);
  if (c >= ctx.components.size()) {
    ctx.error(codes::BEM_DRIVER_COMPONENT, "§13", json_pointer_join(bp, "component"),
              "\"component\" is " + std::to_string(c) + " but target.components has " +
                  std::to_string(ctx.components.size()) + " entries");
    return;
  }
  std::uint32_t s = slot.value_or(0);
  std::size_t n = ctx.components[c].materials.size();
  // §13: an out-of-range slot makes the binding hit no material (runtime), so warn.
  if (s >= n)
    ctx.warning(codes::BEM_DRIVER_MATERIAL_SLOT, "§13", json_pointer_join(bp, "material_slot"),
                "material slot " + std::to_string(s) + " does not exist on component " +
                    std::to_string(c) + " (" + std::to_string(n) +
                    " materials); this binding will affect no material");
}

void check_property(Context& ctx, const Json& b, const std::string& bp) {
  auto prop = ctx.get_string(b, "property", bp, true, 256, "§13");
  if (prop && !is_property_name(*prop))
    ctx.error(
        codes::BEM_DRIVER_PROPERTY, "§13", json_pointer_join(bp, "property"),
        "property name \"" + prop->substr(0, 100) + "\" does not match ^_[a-zA-Z0-9_]{1,95}$");
}

void check_colors(Context& ctx, const Json& b, const std::string& bp) {
  const Json* c = ctx.field(b, "colors", bp, true, "§13");
  if (!c) return;
  const std::string cp = json_pointer_join(bp, "colors");
  if (!c->is_array() || c->size() != 2) {
    ctx.error(codes::BEM_FIELD_TYPE, "§13", cp, "\"colors\" must be [from, to], two RGBA colours");
    return;
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const Json& rgba = (*c)[i];
    const std::string p = json_pointer_join(cp, i);
    if (!rgba.is_array() || rgba.size() != 4) {
      ctx.error(codes::BEM_FIELD_TYPE, "§13", p, "a colour must be an array of 4 numbers (RGBA)");
      continue;
    }
    for (std::size_t k = 0; k < 4; ++k) {
      auto v = core::json_finite_number(rgba[k]);
      if (!v)
        ctx.error(codes::BEM_FIELD_TYPE, "§13", json_pointer_join(p, k),
                  std::string("expected a number, found ") + core::json_type_name(rgba[k]));
      else if (*v < 0.0 || *v > 8.0)
        ctx.error(codes::BEM_DRIVER_COLOR, "§13", json_pointer_join(p, k),
                  "colour channel " + format_number(*v) + " is outside 0..8");
    }
  }
}

void check_binding(Context& ctx, const Json& b, const std::string& bp) {
  if (!ctx.expect_object(b, bp, "§13")) return;
  auto type = ctx.get_string(b, "type", bp, true, 256, "§13");
  if (!type) return;
  if (*type == "morph_parameter" || *type == "blend_shape") {
    auto target = ctx.get_string(b, "target", bp, true, 256, "§13");
    if (target && !ctx.parameter_ids.count(*target))
      ctx.error(codes::BEM_DRIVER_TARGET, "§13", json_pointer_join(bp, "target"),
                "\"target\" names \"" + target->substr(0, 100) +
                    "\", which is not a declared parameter id");
    check_range(ctx, b, bp, 0.0, 1.0);  // normalised tick domain
  } else if (*type == "material_float") {
    check_material_target(ctx, b, bp);
    check_property(ctx, b, bp);
    check_range(ctx, b, bp, -128.0, 128.0);  // output interval, ±128
  } else if (*type == "material_color") {
    check_material_target(ctx, b, bp);
    check_property(ctx, b, bp);
    check_colors(ctx, b, bp);
  } else if (*type == "material_keyword") {
    check_material_target(ctx, b, bp);
    auto kw = ctx.get_string(b, "keyword", bp, true, 256, "§13");
    if (kw && !is_shader_keyword(*kw))
      ctx.error(codes::BEM_DRIVER_KEYWORD, "§13", json_pointer_join(bp, "keyword"),
                "keyword \"" + kw->substr(0, 100) + "\" does not match ^[A-Z0-9_]{2,96}$");
    ctx.get_number(b, "threshold", bp, false, 0.0, 1.0, "§13");
  } else {
    // §13: an unknown binding type drops only this binding (runtime log).
    ctx.warning(codes::BEM_DRIVER_BINDING_TYPE, "§13", json_pointer_join(bp, "type"),
                "unknown binding type \"" + type->substr(0, 100) +
                    "\" (known: morph_parameter, blend_shape, material_float, material_color, "
                    "material_keyword); the runtime drops this binding");
  }
}

/// Returns true when the driver carries a sound object.
bool check_sound(Context& ctx, const Json& d, const std::string& dp) {
  const Json* s = ctx.field(d, "sound", dp, false, "§13");
  if (!s) return false;
  const std::string sp = json_pointer_join(dp, "sound");
  if (!ctx.expect_object(*s, sp, "§13")) return true;
  if (auto id = ctx.get_u32(*s, "payload", sp, true, 0, 0xFFFFFFFFu, "§13")) {
    PayloadUse use;
    use.role = PayloadRole::kSound;
    use.pointer = json_pointer_join(sp, "payload");
    ctx.use_payload(*id, kMinSoundBytes, kMaxSoundBytes, std::move(use));
  }
  if (auto fmt = ctx.get_string(*s, "format", sp, false, 256, "§13");
      fmt && !one_of(*fmt, {"wav", "mp3", "m4a", "aac", "flac", "ogg", "wma", "mp4", "bin"}))
    // Q17: the list is closed, but the format only names the cache file.
    ctx.warning(codes::BEM_DRIVER_SOUND_FORMAT, "§13", json_pointer_join(sp, "format"),
                "sound format \"" + fmt->substr(0, 100) +
                    "\" is not one of wav, mp3, m4a, aac, flac, ogg, wma, mp4 (default bin); "
                    "players may not recognise the cached file");
  ctx.get_number(*s, "gain", sp, false, 0.0, 2.0, "§13");
  ctx.get_bool(*s, "loop", sp, false, "§13");
  ctx.get_number(*s, "offset_seconds", sp, false, 0.0, 60.0, "§13");
  return true;
}

}  // namespace

void check_drivers(Context& ctx) {
  auto it = ctx.manifest.find("drivers");
  if (it == ctx.manifest.end()) return;
  const std::string ptr = "/drivers";
  ctx.need_minor(5, "\"drivers\"", ptr, "§13");
  if (!it->is_array()) {
    ctx.error(codes::BEM_FIELD_TYPE, "§13", ptr,
              std::string("\"drivers\" must be an array, found ") + core::json_type_name(*it));
    return;
  }
  const Json& list = *it;
  if (!list.empty()) ctx.use_capability("dynamic-drivers-v1", ptr);
  // Q16: the tool rejects a 17th driver (the runtime would drop it).
  if (list.size() > kMaxDrivers)
    ctx.error(codes::BEM_DRIVER_QUOTA, "§13", ptr,
              "the package has " + std::to_string(list.size()) + " drivers; at most " +
                  std::to_string(kMaxDrivers) + " are allowed");
  std::set<std::string> ids;
  std::size_t sounds = 0;
  for (std::size_t i = 0; i < list.size() && !ctx.report.full(); ++i) {
    const Json& d = list[i];
    const std::string dp = json_pointer_join(ptr, i);
    if (!ctx.expect_object(d, dp, "§13")) continue;
    if (auto id = ctx.get_stable_id(d, "id", dp, true, "§13"); id && !ids.insert(*id).second)
      ctx.error(codes::BEM_DRIVER_DUPLICATE_ID, "§13", json_pointer_join(dp, "id"),
                "driver id \"" + *id + "\" is used twice");
    ctx.get_string(d, "name", dp, false, 256, "§13");
    if (auto w = ctx.get_string(d, "waveform", dp, false, 256, "§13");
        w && !kWaveformNames.parse(*w))
      ctx.warning(codes::BEM_DRIVER_WAVEFORM, "§13", json_pointer_join(dp, "waveform"),
                  "unknown waveform \"" + w->substr(0, 100) +
                      "\" (known: pingpong, sine, jitter, sawtooth, step); the runtime drops "
                      "this driver");
    if (auto pb = ctx.get_string(d, "playback", dp, false, 256, "§13");
        pb && !kPlaybackNames.parse(*pb))
      ctx.warning(codes::BEM_DRIVER_PLAYBACK, "§13", json_pointer_join(dp, "playback"),
                  "unknown playback \"" + pb->substr(0, 100) +
                      "\" (known: loop, once); the runtime drops this driver");
    // Q17: default_playing defaults to false; true is the author's explicit choice.
    if (auto play = ctx.get_bool(d, "default_playing", dp, false, "§13"); play && *play)
      ctx.info(codes::BEM_DRIVER_DEFAULT_PLAYING, "§13", json_pointer_join(dp, "default_playing"),
               "this driver starts playing when the model loads");
    ctx.get_number(d, "base_frequency", dp, false, 0.0, 10.0, "§13");
    ctx.get_number(d, "speed_multiplier", dp, false, 0.0, 10.0, "§13");
    bool has_sound = check_sound(ctx, d, dp);
    if (has_sound && ++sounds == kMaxDriverSounds + 1)
      ctx.warning(codes::BEM_DRIVER_SOUND_QUOTA, "§13", json_pointer_join(dp, "sound"),
                  "more than 8 drivers carry a sound; at most 8 play at once and the runtime "
                  "drops the rest");
    // Q17: a sound-only driver may omit bindings (or leave them empty);
    // otherwise 1..32 bindings.
    const Json* bindings =
        ctx.get_array(d, "bindings", dp, !has_sound, has_sound ? 0 : 1, kMaxDriverBindings, "§13");
    if (!bindings) continue;
    for (std::size_t k = 0; k < bindings->size(); ++k)
      check_binding(ctx, (*bindings)[k], json_pointer_join(json_pointer_join(dp, "bindings"), k));
  }
}

}  // namespace charkit::bem
