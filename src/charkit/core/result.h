// Result<T>: a value or an Error with code, message and location.
// No exceptions cross a module boundary (ARCHITECTURE.md); decoders of
// untrusted input return Result and never crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "charkit/core/error_code.h"

namespace charkit::core {

/// Where in the input a problem is: a byte offset, a JSON pointer, both or neither.
struct Location {
  std::optional<std::uint64_t> offset;  ///< byte offset in the file or member
  std::string pointer;                  ///< RFC 6901 JSON pointer ("" = none)
  std::string member;                   ///< member inside an archive ("" = the file itself)

  static Location at_offset(std::uint64_t off) { return Location{off, {}, {}}; }
  static Location at_pointer(std::string ptr) { return Location{std::nullopt, std::move(ptr), {}}; }
  bool empty() const { return !offset && pointer.empty() && member.empty(); }
  /// "byte 40", "/meshes/0/draws", "payloads/0001.bin: byte 12" …
  std::string to_string() const;
};

/// An error: a stable machine code (e.g. BEM_HEADER_MAGIC), a human message
/// and where it happened. Raised with make_error and a declared code; the
/// code is kept as text so that an error read back (from a child process,
/// a job record, a JSON reply) is the same type as one raised here.
struct Error {
  std::string code;
  std::string message;
  Location location;

  std::string to_string() const;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

/// Result of an operation that yields nothing on success.
struct Ok {};
using Status = Result<Ok>;

/// The one way to raise an error: a declared code (charkit/<module>/error_codes.h),
/// a message and, when known, where.
inline Error make_error(ErrorCode code, std::string message, Location loc = {}) {
  return Error{code.str(), std::move(message), std::move(loc)};
}
/// make_error located at a JSON pointer of the input (RFC 6901).
inline Error error_at_pointer(ErrorCode code, std::string message, std::string pointer) {
  return make_error(code, std::move(message), Location::at_pointer(std::move(pointer)));
}
/// make_error located at a byte offset of the input.
inline Error error_at_offset(ErrorCode code, std::string message, std::uint64_t offset) {
  return make_error(code, std::move(message), Location::at_offset(offset));
}

}  // namespace charkit::core
