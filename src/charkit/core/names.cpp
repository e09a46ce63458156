#include "charkit/core/names.h"

#include <algorithm>

#include "charkit/core/utf8.h"

namespace charkit::core {

namespace {

template <typename S>
std::string format_list(std::span<const S> names, std::size_t limit) {
  if (names.empty()) return "none";
  limit = std::max<std::size_t>(limit, 1);
  const std::size_t shown = std::min(names.size(), limit);
  std::string out;
  for (std::size_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    out += quote_excerpt(names[i], kNameListNameBytes);
  }
  if (names.size() > shown)
    out += " and " + std::to_string(names.size() - shown) + " more (" +
           std::to_string(names.size()) + " in all)";
  return out;
}

}  // namespace

std::string format_name_list(std::span<const std::string> names, std::size_t limit) {
  return format_list(names, limit);
}

std::string format_name_list(std::span<const std::string_view> names, std::size_t limit) {
  return format_list(names, limit);
}

}  // namespace charkit::core
