// BEM 1.5: §12 material overrides on draws (material-overrides-v1) and the
// root offset (root-offset-v1); §13 drivers live in check_drivers.cpp.
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "charkit/bem/detail/check_v15.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {

using core::json_pointer_join;

constexpr double kMaxRootOffset = 0.2;      // §12: |translation| ≤ 0.2 m
constexpr double kMaxRootOffsetSkip = 1.0;  // §12: skip_validation relaxes to 1.0 m
// Q18: the limit is compared in float64 with a 1e-9 m tolerance, so a length
// that is 0.2 up to decimal/binary rounding (e.g. [0.12, 0.16, 0]) passes.
constexpr double kLengthTolerance = 1e-9;
constexpr std::size_t kMaxPathChars = 256;

bool is_word_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/// One typed map of material_overrides: name -> number (dims 1) or name -> [4 numbers].
void check_value_map(Context& ctx, const Json& o, const char* key, const std::string& ptr,
                     std::size_t quota, int dims, double lo, double hi) {
  const Json* map = ctx.field(o, key, ptr, false, "§12");
  if (!map) return;
  const std::string mp = json_pointer_join(ptr, key);
  if (!map->is_object()) {
    ctx.error(codes::BEM_FIELD_TYPE, "§12", mp,
              std::string("\"") + key + "\" must be an object of property name -> value, found " +
                  core::json_type_name(*map));
    return;
  }
  if (map->size() > quota)
    ctx.error(codes::BEM_OVERRIDE_QUOTA, "§12", mp,
              std::string("\"") + key + "\" has " + std::to_string(map->size()) +
                  " entries; at most " + std::to_string(quota) + " are allowed per draw");
  const bool skip = ctx.skip_validation();
  for (auto it = map->begin(); it != map->end(); ++it) {
    const std::string& name = it.key();
    const std::string p = json_pointer_join(mp, name);
    if (skip ? !is_printable_name(name) : !is_property_name(name))
      ctx.error(codes::BEM_OVERRIDE_NAME, "§12", p,
                "property name \"" + name.substr(0, 100) + "\" is not allowed; " +
                    (skip ? "names must be 1..96 printable ASCII characters"
                          : "names match ^_[a-zA-Z0-9_]{1,95}$"));
    // Collect the numbers (one, or exactly four).
    std::vector<const Json*> nums;
    if (dims == 1) {
      nums.push_back(&*it);
    } else if (!it->is_array() || it->size() != static_cast<std::size_t>(dims)) {
      ctx.error(codes::BEM_FIELD_TYPE, "§12", p,
                std::string("\"") + key + "\" values must be arrays of 4 numbers, found " +
                    (it->is_array() ? std::to_string(it->size()) + " entries"
                                    : std::string(core::json_type_name(*it))));
      continue;
    } else {
      for (const auto& v : *it) nums.push_back(&v);
    }
    for (std::size_t i = 0; i < nums.size(); ++i) {
      std::string vp = dims == 1 ? p : json_pointer_join(p, i);
      auto v = core::json_finite_number(*nums[i]);
      if (!v) {
        ctx.error(codes::BEM_FIELD_TYPE, "§12", vp,
                  std::string("expected a number, found ") + core::json_type_name(*nums[i]));
        continue;
      }
      if (*v >= lo && *v <= hi) continue;
      std::string msg = "value " + format_number(*v) + " is outside " + format_number(lo) + ".." +
                        format_number(hi);
      if (skip)  // §12 skip_validation: out-of-range values are clamped
        ctx.warning(codes::BEM_OVERRIDE_CLAMPED, "§12", vp, msg + "; it will be clamped");
      else
        ctx.error(codes::BEM_OVERRIDE_RANGE, "§12", vp, msg);
    }
  }
}

std::set<std::string> check_keyword_list(Context& ctx, const Json& o, const char* key,
                                         const std::string& ptr, std::size_t quota) {
  std::set<std::string> out;
  const Json* list = ctx.field(o, key, ptr, false, "§12");
  if (!list) return out;
  const std::string lp = json_pointer_join(ptr, key);
  if (!list->is_array()) {
    ctx.error(codes::BEM_FIELD_TYPE, "§12", lp,
              std::string("\"") + key + "\" must be an array of keywords, found " +
                  core::json_type_name(*list));
    return out;
  }
  if (list->size() > quota)
    ctx.error(codes::BEM_OVERRIDE_QUOTA, "§12", lp,
              std::string("\"") + key + "\" has " + std::to_string(list->size()) +
                  " keywords; at most " + std::to_string(quota) + " are allowed per draw");
  const bool skip = ctx.skip_validation();
  for (const auto& [k, p, i] : elements(*list, lp)) {
    const std::string* text = ctx.expect_string(k, p, "§12", "a keyword must be a string");
    if (!text) continue;
    const std::string& s = *text;
    if (skip ? !is_printable_name(s) : !is_shader_keyword(s)) {
      ctx.error(codes::BEM_OVERRIDE_KEYWORD, "§12", p,
                "keyword \"" + s.substr(0, 100) + "\" is not allowed; " +
                    (skip ? "keywords must be 1..96 printable ASCII characters"
                          : "keywords match ^[A-Z0-9_]{2,96}$"));
      continue;
    }
    if (!out.insert(s).second)
      ctx.warning(codes::BEM_OVERRIDE_DUPLICATE_KEYWORD, "§12", p,
                  "keyword \"" + s + "\" is listed twice in \"" + key + "\"");
  }
  return out;
}

void check_root_offset(Context& ctx) {
  auto it = ctx.manifest.find("root_offset");
  if (it == ctx.manifest.end()) return;
  const std::string ptr = "/root_offset";
  ctx.use_capability("root-offset-v1", ptr);
  if (!ctx.expect_object(*it, ptr, "§12")) return;
  const Json& ro = *it;
  if (auto path = ctx.get_string(ro, "path", ptr, true, kMaxPathChars, "§12")) {
    const std::string pp = json_pointer_join(ptr, "path");
    bool chars_ok = true;
    for (char c : *path)
      chars_ok = chars_ok && (is_word_char(c) || c == '-' || c == ' ' || c == '/');
    if (path->empty())
      ctx.error(codes::BEM_ROOT_OFFSET_PATH, "§12", pp,
                "\"path\" is empty; it needs 1..256 characters");
    else if (!chars_ok)
      ctx.error(codes::BEM_ROOT_OFFSET_PATH, "§12", pp,
                "\"path\" \"" + path->substr(0, 100) + "\" has characters outside [-A-Za-z0-9_ /]");
    else if (path->find("..") != std::string::npos || path->find("//") != std::string::npos)
      ctx.error(codes::BEM_ROOT_OFFSET_PATH, "§12", pp,
                "\"path\" \"" + *path + "\" must not contain \"..\" or \"//\"");
  }
  const Json* t = ctx.get_array(ro, "translation", ptr, true, 3, 3, "§12");
  if (!t) return;
  const std::string tp = json_pointer_join(ptr, "translation");
  double sq = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    auto v = core::json_finite_number((*t)[i]);
    if (!v) {
      ctx.error(codes::BEM_FIELD_TYPE, "§12", json_pointer_join(tp, i),
                std::string("a translation component must be a finite number, found ") +
                    core::json_type_name((*t)[i]));
      return;
    }
    sq += *v * *v;
  }
  double len = std::sqrt(sq);
  const bool skip = ctx.skip_validation();
  double limit = skip ? kMaxRootOffsetSkip : kMaxRootOffset;
  if (len <= limit + kLengthTolerance) return;
  std::string msg = "translation length is " + format_number(len) + " m; at most " +
                    format_number(limit) + " m is allowed";
  if (skip)  // §12: with validation off the offset is clamped to 1.0 m
    ctx.warning(codes::BEM_ROOT_OFFSET_CLAMPED, "§12", tp, msg + "; it will be clamped");
  else
    ctx.error(codes::BEM_ROOT_OFFSET_RANGE, "§12", tp, msg);
}

}  // namespace

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool is_property_name(std::string_view s) {
  if (s.size() < 2 || s.size() > 96 || s[0] != '_') return false;
  for (char c : s.substr(1))
    if (!is_word_char(c)) return false;
  return true;
}

bool is_shader_keyword(std::string_view s) {
  if (s.size() < 2 || s.size() > 96) return false;
  for (char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool is_printable_name(std::string_view s) {
  if (s.empty() || s.size() > 96) return false;
  for (char c : s)
    if (c < 0x20 || c > 0x7E) return false;
  return true;
}

void check_material_overrides(Context& ctx, const Json& o, const std::string& ptr) {
  if (!ctx.expect_object(o, ptr, "§12")) return;
  // §12 skip_validation: quotas ×4.
  const std::size_t q = ctx.skip_validation() ? 4 : 1;
  if (o.empty())
    ctx.info(codes::BEM_OVERRIDE_EMPTY, "§12", ptr,
             "\"material_overrides\" is empty and has no effect");
  for (auto it = o.begin(); it != o.end(); ++it) {
    const auto& k = it.key();
    if (k != "floats" && k != "colors" && k != "vectors" && k != "disable_keywords" &&
        k != "enable_keywords")
      ctx.warning(codes::BEM_OVERRIDE_UNKNOWN_FIELD, "§12", json_pointer_join(ptr, k),
                  "\"" + k.substr(0, 100) +
                      "\" is not a material override field (floats, colors, vectors, "
                      "disable_keywords, enable_keywords) and is ignored");
  }
  check_value_map(ctx, o, "floats", ptr, 32 * q, 1, -128.0, 128.0);
  check_value_map(ctx, o, "colors", ptr, 16 * q, 4, 0.0, 8.0);
  check_value_map(ctx, o, "vectors", ptr, 8 * q, 4, -65536.0, 65536.0);
  auto disabled = check_keyword_list(ctx, o, "disable_keywords", ptr, 16 * q);
  auto enabled = check_keyword_list(ctx, o, "enable_keywords", ptr, 16 * q);
  // Q19: a keyword both enabled and disabled has no defined result.
  for (const auto& k : enabled)
    if (disabled.count(k))
      ctx.error(codes::BEM_OVERRIDE_KEYWORD_CONFLICT, "§12",
                json_pointer_join(ptr, "enable_keywords"),
                "keyword \"" + k + "\" is both enabled and disabled on the same draw");
}

void check_v15(Context& ctx) {
  check_root_offset(ctx);
  check_drivers(ctx);
}

}  // namespace charkit::bem
