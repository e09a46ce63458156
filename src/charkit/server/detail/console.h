// The web console's files (web/, built by esbuild): read once when the
// server starts and answered from memory, so serving the console costs no
// file I/O and no path from a request ever reaches the file system
// (docs/console.md §Serving).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::server {

struct ConsoleFile {
  std::string body;
  std::string content_type;
  std::string etag;  ///< "\"sha256-hex\"" of the body
};

struct ConsoleFiles {
  ConsoleFile index;                                       ///< index.html
  std::map<std::string, ConsoleFile, std::less<>> assets;  ///< assets/NAME
};

/// Limits on what load_console reads.
inline constexpr std::size_t kConsoleMaxFiles = 64;
inline constexpr std::size_t kConsoleMaxBytes = 32u << 20;

/// Reads DIR/index.html and the regular files directly in DIR/assets whose
/// names are 1–128 of [A-Za-z0-9._-] not starting with '.'. Errors
/// (SERVER_CONSOLE) name the file: index.html missing, a file unreadable,
/// more than kConsoleMaxFiles files or kConsoleMaxBytes bytes.
core::Result<ConsoleFiles> load_console(const std::filesystem::path& dir);

/// The Content-Type of a console file from its name's extension.
std::string_view console_content_type(std::string_view name);

/// True for the console's page routes, answered with index.html: /models,
/// /models/{id}, /motions, /motions/{id}, /packages, /packages/{id},
/// /live, /live/{channel} (the id and channel are checked by the page).
bool is_console_route(const std::vector<std::string>& segments);

/// True when an If-None-Match header value lists `etag` (or is "*").
bool etag_matches(std::string_view if_none_match, std::string_view etag);

}  // namespace charkit::server
