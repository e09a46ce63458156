// The one way an error message lists the valid names when it rejects one
// (a bone, mesh, joint, animation, option …): every name quoted, the first
// `limit` of them, then how many more there are.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace charkit::core {

/// Names shown before "and N more" by default.
inline constexpr std::size_t kNameListLimit = 20;
/// Bytes of one name quoted at most (longer names are cut, "..." appended).
inline constexpr std::size_t kNameListNameBytes = 64;

/// "'Hips', 'Spine', 'Head'" — each name through quote_excerpt (single
/// quotes, control and invalid bytes as \xHH, at most kNameListNameBytes
/// bytes), in the given order, ", " between them. More than `limit` names:
/// the first `limit`, then " and 37 more (57 in all)". No names: "none".
/// limit 0 counts as 1. Safe on untrusted names: always valid UTF-8, no
/// control characters, at most limit × (kNameListNameBytes × 4 + 8) + 64
/// bytes whatever the input.
std::string format_name_list(std::span<const std::string> names,
                             std::size_t limit = kNameListLimit);
std::string format_name_list(std::span<const std::string_view> names,
                             std::size_t limit = kNameListLimit);

}  // namespace charkit::core
