// Declared error codes. Every code an Error or an Issue carries is declared
// once, in its module's error_codes.def (X-macro lines
// CHARKIT_ERROR(CODE, "meaning", "what the user can do")); docs/errors.md is
// generated from those declarations (`charkit errors --markdown`) and the
// test errors.declared keeps sources, declarations and docs in step.
//
// An error is raised with a declared constant, `make_error(codes::IO_OPEN,
// …)`, and code that branches on a code compares with one:
// `if (e.code == store::codes::STORE_TOO_LARGE)`; make_error and
// Report::error take only an ErrorCode, so a typo fails to compile. Each module's constants live in
// charkit/<module>/error_codes.h (small; include it only where needed),
// with `<module>::codes::kAll`, the module's table. core knows no other
// module: the list of every code is assembled above all of them, by the
// charkit program (`charkit errors`).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "charkit/core/error_code.h"

namespace charkit::core {

struct Error;

/// One declared code: its spelling, the module that declares it, a one-line
/// meaning and what the user can do about it.
struct ErrorCodeInfo {
  std::string_view code;
  std::string_view module;
  std::string_view meaning;
  std::string_view remedy;
};

/// The entry for `code` in `table`, or nullptr.
const ErrorCodeInfo* find_error_code(std::string_view code, std::span<const ErrorCodeInfo> table);

/// docs/errors.md: a header saying how to regenerate it, then one table per
/// module (code, meaning, what you can do), in table order.
std::string error_codes_markdown(std::span<const ErrorCodeInfo> table);

/// True for the I/O family (IO_*): the named file or folder could not be
/// opened, read or written, as opposed to invalid content.
bool is_io_error(const Error& e);
/// True for the failures of an isolated child process (ISOLATED_*,
/// core/isolated.h): crash, timeout, limits, cancellation.
bool is_isolation_error(const Error& e);

namespace codes {
#define CHARKIT_ERROR(code, meaning, remedy) inline constexpr ErrorCode code{#code};
#include "charkit/core/error_codes.def"
#undef CHARKIT_ERROR
/// Every code the module declares, with its meaning and what the user can
/// do, in declaration order: `charkit errors` and docs/errors.md list the
/// modules' tables one after another.
inline constexpr ErrorCodeInfo kAll[] = {
#define CHARKIT_ERROR(code, meaning, remedy) {#code, "core", meaning, remedy},
#include "charkit/core/error_codes.def"
#undef CHARKIT_ERROR
};
}  // namespace codes

}  // namespace charkit::core
