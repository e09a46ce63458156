// The payload file names of a ZIP or folder package (§14): one parser for
// both containers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace charkit::bem::detail {

/// The highest payload number: a package has at most 16384 directory
/// entries (§11), numbered from 0.
inline constexpr std::uint32_t kMaxPayloadNumber = 16383;

/// The payload number of a file name "0007.bin" (four digits, padded) or
/// "7.bin" (decimal without leading zeros); nullopt for any other name. The
/// number is not checked against kMaxPayloadNumber: the containers report a
/// number over it as their own error or skip the file.
inline std::optional<std::uint32_t> payload_number(std::string_view file) {
  if (file.size() < 5 || file.substr(file.size() - 4) != ".bin") return std::nullopt;
  const std::string_view digits = file.substr(0, file.size() - 4);
  if (digits.empty() || digits.size() > 5) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  const bool padded = digits.size() == 4;
  if (!padded && digits.size() > 1 && digits[0] == '0') return std::nullopt;
  std::uint32_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<std::uint32_t>(c - '0');
  return v;
}

}  // namespace charkit::bem::detail
