#include "charkit/bem/detail/context.h"

#include <algorithm>
#include <limits>

#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {
struct CapabilityInfo {
  const char* name;
  int min_minor;
};
// §1 table: capabilities and the version that introduced each.
constexpr CapabilityInfo kCapabilities[] = {
    {"native-materials", 0},
    {"palette-u8", 0},
    {"indices-u32", 0},
    {"fixed-appearances", 0},
    {"composable-options", 1},
    {"keep-material-textures", 1},
    {"texture-slots", 2},
    {"resource-bone-aliases", 2},
    {"body-parameters", 3},
    {"mesh-position-deltas", 3},
    {"multi-resource-targets", 4},
    {"static-meshes", 4},
    {"material-overrides-v1", 5},
    {"root-offset-v1", 5},
    {"dynamic-drivers-v1", 5},
};
}  // namespace

bool is_stable_id(std::string_view s) {
  if (s.empty() || s.size() > 96) return false;
  auto alnum = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (!alnum(s[0])) return false;
  for (char c : s.substr(1))
    if (!alnum(c) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

int capability_min_minor(std::string_view cap) {
  for (const auto& c : kCapabilities)
    if (cap == c.name) return c.min_minor;
  return -1;
}

const std::vector<std::string>& known_capabilities() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& c : kCapabilities) v.emplace_back(c.name);
    return v;
  }();
  return names;
}

Context::Context(const Json& m, const Package& p, core::Report& r, const ValidateOptions& o,
                 int effective_minor, bool minor_known)
    : manifest(m),
      package(p),
      report(r),
      options(o),
      minor_(effective_minor),
      minor_known_(minor_known) {}

void Context::need_minor(int m, const std::string& what, const std::string& pointer,
                         const char* section) {
  if (m > needed_minor_) needed_minor_ = m;
  // One report per location: a field's presence and its capability both
  // need the same version (e.g. /parameters), and one line says it.
  if (minor_known_ && minor_ < m && version_reported_.insert(pointer).second)
    error(codes::BEM_VERSION_TOO_LOW, section, pointer,
          what + " needs BEM 1." + std::to_string(m) + " but the package declares 1." +
              std::to_string(minor_));
}

void Context::allow_max_minor(int m, const std::string& what, const std::string& pointer,
                              const char* section) {
  if (minor_ > m)
    error(codes::BEM_VERSION_TOO_HIGH, section, pointer,
          what + " exists only up to BEM 1." + std::to_string(m) + " but the package is 1." +
              std::to_string(minor_));
}

void Context::use_capability(const std::string& cap, const std::string& pointer) {
  used_capabilities.emplace(cap, pointer);
  int m = capability_min_minor(cap);
  if (m > 0) need_minor(m, "capability " + cap, pointer);
}

void Context::error(core::ErrorCode code, const char* section, const std::string& pointer,
                    const std::string& message) {
  report.error(code, section, core::Location::at_pointer(pointer), message);
}
void Context::warning(core::ErrorCode code, const char* section, const std::string& pointer,
                      const std::string& message) {
  report.warning(code, section, core::Location::at_pointer(pointer), message);
}
void Context::info(core::ErrorCode code, const char* section, const std::string& pointer,
                   const std::string& message) {
  report.info(code, section, core::Location::at_pointer(pointer), message);
}

const Json* Context::field(const Json& obj, const char* key, const std::string& obj_ptr,
                           bool required, const char* section) {
  if (obj.is_object()) {
    auto it = obj.find(key);
    if (it != obj.end()) return &*it;
  }
  if (required)
    error(codes::BEM_FIELD_MISSING, section, core::json_pointer_join(obj_ptr, key),
          std::string("required field \"") + key + "\" is missing");
  return nullptr;
}

std::optional<std::uint32_t> Context::get_u32(const Json& obj, const char* key,
                                              const std::string& obj_ptr, bool required,
                                              std::uint64_t lo, std::uint64_t hi,
                                              const char* section) {
  const Json* j = field(obj, key, obj_ptr, required, section);
  if (!j) return std::nullopt;
  std::string ptr = core::json_pointer_join(obj_ptr, key);
  auto v = core::json_uint32(*j);
  if (!v) {
    error(
        codes::BEM_FIELD_TYPE, "§3", ptr,
        std::string("\"") + key + "\" must be a UInt32 integer, found " + core::json_type_name(*j));
    return std::nullopt;
  }
  if (*v < lo || *v > hi) {
    error(codes::BEM_FIELD_RANGE, section, ptr,
          std::string("\"") + key + "\" is " + std::to_string(*v) + ", allowed " +
              std::to_string(lo) + ".." + std::to_string(hi));
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> Context::get_string(const Json& obj, const char* key,
                                               const std::string& obj_ptr, bool required,
                                               std::size_t max_bytes, const char* section) {
  const Json* j = field(obj, key, obj_ptr, required, section);
  if (!j) return std::nullopt;
  std::string ptr = core::json_pointer_join(obj_ptr, key);
  if (!j->is_string()) {
    error(codes::BEM_FIELD_TYPE, section, ptr,
          std::string("\"") + key + "\" must be a string, found " + core::json_type_name(*j));
    return std::nullopt;
  }
  const auto& s = j->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    error(codes::BEM_STRING_LENGTH, "§3", ptr,
          std::string("\"") + key + "\" is " + std::to_string(s.size()) + " bytes, at most " +
              std::to_string(max_bytes) + " allowed");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Context::get_stable_id(const Json& obj, const char* key,
                                                  const std::string& obj_ptr, bool required,
                                                  const char* section) {
  // A stable ID is a string first (BEM_FIELD_TYPE as for any string); its
  // pattern bounds its length.
  auto s =
      get_string(obj, key, obj_ptr, required, std::numeric_limits<std::size_t>::max(), section);
  if (!s) return std::nullopt;
  if (!is_stable_id(*s)) {
    error(codes::BEM_STABLE_ID, "§3", core::json_pointer_join(obj_ptr, key),
          std::string("\"") + key + "\" is not a stable ID ([A-Za-z0-9][A-Za-z0-9_.-]{0,95}): \"" +
              s->substr(0, 120) + "\"");
    return std::nullopt;
  }
  return s;
}

std::optional<bool> Context::get_bool(const Json& obj, const char* key, const std::string& obj_ptr,
                                      bool required, const char* section) {
  const Json* j = field(obj, key, obj_ptr, required, section);
  if (!j) return std::nullopt;
  if (!j->is_boolean()) {
    error(codes::BEM_FIELD_TYPE, section, core::json_pointer_join(obj_ptr, key),
          std::string("\"") + key + "\" must be a boolean, found " + core::json_type_name(*j));
    return std::nullopt;
  }
  return j->get<bool>();
}

std::optional<double> Context::get_number(const Json& obj, const char* key,
                                          const std::string& obj_ptr, bool required, double lo,
                                          double hi, const char* section) {
  const Json* j = field(obj, key, obj_ptr, required, section);
  if (!j) return std::nullopt;
  std::string ptr = core::json_pointer_join(obj_ptr, key);
  auto v = core::json_finite_number(*j);
  if (!v) {
    error(
        codes::BEM_FIELD_TYPE, section, ptr,
        std::string("\"") + key + "\" must be a finite number, found " + core::json_type_name(*j));
    return std::nullopt;
  }
  if (!(*v >= lo && *v <= hi)) {
    error(codes::BEM_FIELD_RANGE, section, ptr,
          std::string("\"") + key + "\" is " + std::to_string(*v) + ", allowed " +
              std::to_string(lo) + ".." + std::to_string(hi));
    return std::nullopt;
  }
  return v;
}

const Json* Context::get_array(const Json& obj, const char* key, const std::string& obj_ptr,
                               bool required, std::size_t lo, std::size_t hi, const char* section) {
  const Json* j = field(obj, key, obj_ptr, required, section);
  if (!j) return nullptr;
  std::string ptr = core::json_pointer_join(obj_ptr, key);
  if (!j->is_array()) {
    error(codes::BEM_FIELD_TYPE, section, ptr,
          std::string("\"") + key + "\" must be an array, found " + core::json_type_name(*j));
    return nullptr;
  }
  if (j->size() < lo || j->size() > hi) {
    error(codes::BEM_ARRAY_SIZE, section, ptr,
          std::string("\"") + key + "\" has " + std::to_string(j->size()) + " entries, allowed " +
              std::to_string(lo) + ".." + std::to_string(hi));
    return nullptr;
  }
  return j;
}

bool Context::expect_object(const Json& j, const std::string& ptr, const char* section) {
  if (j.is_object()) return true;
  error(codes::BEM_FIELD_TYPE, section, ptr,
        std::string("expected an object, found ") + core::json_type_name(j));
  return false;
}

const std::string* Context::expect_string(const Json& j, const std::string& ptr,
                                          const char* section, const std::string& what) {
  if (j.is_string()) return &j.get_ref<const std::string&>();
  error(codes::BEM_FIELD_TYPE, section, ptr, what + ", found " + core::json_type_name(j));
  return nullptr;
}

bool Context::use_payload(std::uint32_t id, std::uint64_t min_size, std::uint64_t max_size,
                          PayloadUse use) {
  const auto& table = package.payloads();
  if (id >= table.size() || !table[id].present) {
    if (package.kind() == ContainerKind::kZip)
      error(codes::BEM_ZIP_MISSING_PAYLOAD, "§14", use.pointer,
            "ZIP package is missing payload " + std::to_string(id));
    else
      error(codes::BEM_PAYLOAD_ID, "§2", use.pointer,
            "payload " + std::to_string(id) + " does not exist (the directory has " +
                std::to_string(table.size()) + ")");
    return false;
  }
  std::uint64_t size = table[id].decoded_size;
  if (size < min_size || size > max_size) {
    std::string want = min_size == max_size
                           ? std::to_string(min_size)
                           : std::to_string(min_size) + ".." + std::to_string(max_size);
    error(codes::BEM_PAYLOAD_SIZE, "§2", use.pointer,
          "payload " + std::to_string(id) + " decodes to " + std::to_string(size) +
              " bytes, expected " + want);
    return false;
  }
  payload_uses[id].push_back(std::move(use));
  return true;
}

}  // namespace charkit::bem
