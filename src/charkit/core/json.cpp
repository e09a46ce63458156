#include "charkit/core/json.h"

#include <cmath>
#include <unordered_set>
#include <vector>

#include "charkit/core/error_codes.h"

namespace charkit::core {
namespace {

// A DOM builder that refuses what strict BEM-style JSON forbids. nlohmann's
// sax_parse calls these methods on the static type, so hiding the base
// methods is enough.
class StrictDomBuilder : public nlohmann::detail::json_sax_dom_parser<Json> {
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;

 public:
  StrictDomBuilder(Json& out, const JsonLimits& limits) : Base(out, false), limits_(limits) {}

  bool null() { return value() && Base::null(); }
  bool boolean(bool v) { return value() && Base::boolean(v); }
  bool number_integer(Json::number_integer_t v) { return value() && Base::number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return value() && Base::number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) {
    return value() && Base::number_float(v, s);
  }
  bool string(Json::string_t& s) {
    if (!value()) return false;
    if (s.find('\0') != std::string::npos)
      return fail(codes::JSON_NUL_CHARACTER, "string contains a NUL character", pointer());
    return Base::string(s);
  }
  bool binary(Json::binary_t& b) { return value() && Base::binary(b); }
  bool start_object(std::size_t n) {
    if (!value() || !enter()) return false;
    frames_.push_back(Frame{true, 0, {}, {}});
    return Base::start_object(n);
  }
  bool key(Json::string_t& k) {
    Frame& f = frames_.back();
    if (k.find('\0') != std::string::npos)
      return fail(codes::JSON_NUL_CHARACTER, "object key contains a NUL character", pointer());
    f.key = k;
    if (!f.keys.insert(k).second)
      return fail(codes::JSON_DUPLICATE_KEY, "duplicate key \"" + k + "\"", pointer());
    return Base::key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return Base::end_object();
  }
  bool start_array(std::size_t n) {
    if (!value() || !enter()) return false;
    frames_.push_back(Frame{false, 0, {}, {}});
    return Base::start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return Base::end_array();
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    if (!error_) {
      std::string msg = ex.what();
      // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
      if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
      error_ = core::error_at_offset(codes::JSON_SYNTAX, msg, position == 0 ? 0 : position - 1);
    }
    return false;
  }

  std::optional<Error> take_error() { return std::move(error_); }
  std::uint64_t values() const { return values_; }

 private:
  struct Frame {
    bool is_object;
    std::size_t index;  // index of the current element (arrays)
    std::string key;    // current key (objects)
    std::unordered_set<std::string> keys;
  };

  // Called at the start of every value: advances the enclosing array's index.
  // Counts it against max_values; the pointer of a refusal names the value.
  bool value() {
    if (!frames_.empty() && !frames_.back().is_object) frames_.back().index++;
    if (limits_.max_values != 0 && values_ >= limits_.max_values)
      return fail(codes::JSON_TOO_MANY_VALUES,
                  "more than " + std::to_string(limits_.max_values) + " values", pointer());
    ++values_;
    return true;
  }
  bool enter() {
    if (frames_.size() + 1 > limits_.max_depth)
      return fail(codes::JSON_TOO_DEEP,
                  "nesting deeper than " + std::to_string(limits_.max_depth) + " levels",
                  pointer());
    return true;
  }
  std::string pointer() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.is_object)
        p = json_pointer_join(p, f.key);
      else if (f.index > 0)
        p = json_pointer_join(p, f.index - 1);
    }
    return p;
  }
  bool fail(core::ErrorCode code, std::string msg, std::string ptr) {
    if (!error_) error_ = core::error_at_pointer(code, std::move(msg), std::move(ptr));
    return false;
  }

  const JsonLimits& limits_;
  std::vector<Frame> frames_;
  std::optional<Error> error_;
  std::uint64_t values_ = 0;
};

}  // namespace

Result<Json> parse_json_strict(std::string_view text, const JsonLimits& limits,
                               std::uint64_t* values) {
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF)
    return core::error_at_offset(codes::JSON_BOM, "JSON text starts with a UTF-8 byte-order mark",
                                 0);
  Json root;
  StrictDomBuilder sax(root, limits);
  bool ok = Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                            /*strict=*/true);
  if (values) *values = sax.values();
  if (auto err = sax.take_error()) return std::move(*err);
  if (!ok) return core::error_at_offset(codes::JSON_SYNTAX, "invalid JSON", 0);
  return root;
}

std::string json_pointer_escape(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string json_pointer_join(const std::string& parent, std::string_view token) {
  return parent + "/" + json_pointer_escape(token);
}
std::string json_pointer_join(const std::string& parent, std::size_t index) {
  return parent + "/" + std::to_string(index);
}

std::string json_string_or_empty(const Json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::uint32_t> json_uint32(const Json& j) {
  if (!j.is_number_unsigned()) return std::nullopt;
  auto v = j.get<Json::number_unsigned_t>();
  if (v > 0xFFFFFFFFull) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

std::optional<double> json_finite_number(const Json& j) {
  if (!j.is_number()) return std::nullopt;
  double d = j.get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

const char* json_type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    default:
      return "value";
  }
}

JsonBox::JsonBox() : value_(std::make_unique<Json>()) {}
JsonBox::JsonBox(const Json& value) : value_(std::make_unique<Json>(value)) {}
JsonBox::JsonBox(Json&& value) : value_(std::make_unique<Json>(std::move(value))) {}
JsonBox::JsonBox(const JsonBox& other)
    : value_(other.value_ ? std::make_unique<Json>(*other.value_) : nullptr) {}
JsonBox::JsonBox(JsonBox&& other) noexcept = default;
JsonBox& JsonBox::operator=(const JsonBox& other) {
  if (this != &other) value_ = other.value_ ? std::make_unique<Json>(*other.value_) : nullptr;
  return *this;
}
JsonBox& JsonBox::operator=(JsonBox&& other) noexcept = default;
JsonBox::~JsonBox() = default;
JsonBox JsonBox::empty_object() {
  return JsonBox(Json::object());
}

}  // namespace charkit::core
