// Names of an enum's values, written once as a table: the text form
// (database columns, JSON, command lines) and its parser come from the same
// entries, so they cannot disagree.
//
//   constexpr core::EnumNames<Scope, 3> kScopes{{{{Scope::read, "read"},
//                                                 {Scope::write, "write"},
//                                                 {Scope::admin, "admin"}}}};
//   kScopes.name(Scope::write) == "write";  kScopes.parse("admin") == Scope::admin
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace charkit::core {

template <typename E, std::size_t N>
struct EnumNames {
  static_assert(N > 0, "an enum with names has at least one value");
  std::array<std::pair<E, std::string_view>, N> entries;

  /// The value's name; the first entry's name for a value not in the table
  /// (an out-of-range cast), so a name is always valid text.
  constexpr std::string_view name(E value) const {
    for (const auto& [v, n] : entries)
      if (v == value) return n;
    return entries[0].second;
  }
  /// The value named exactly `text` (case-sensitive); nullopt otherwise.
  constexpr std::optional<E> parse(std::string_view text) const {
    for (const auto& [v, n] : entries)
      if (n == text) return v;
    return std::nullopt;
  }
};

}  // namespace charkit::core
