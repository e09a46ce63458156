// The web console's files (console.h).
#include "charkit/server/detail/console.h"

#include <fstream>
#include <iterator>
#include <system_error>

#include "charkit/core/sha256.h"
#include "charkit/server/error_codes.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;

bool servable_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

core::Result<ConsoleFile> read_console_file(const fs::path& path, std::string_view name,
                                            std::size_t& total) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec)
    return core::make_error(codes::SERVER_CONSOLE,
                            "cannot read " + path.string() + ": " + ec.message());
  if (size > kConsoleMaxBytes - total)
    return core::make_error(codes::SERVER_CONSOLE, "the console files in " +
                                                       path.parent_path().string() + " exceed " +
                                                       std::to_string(kConsoleMaxBytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  std::string body(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(body.data(), static_cast<std::streamsize>(body.size())))
    return core::make_error(codes::SERVER_CONSOLE, "cannot read " + path.string());
  total += body.size();
  ConsoleFile f;
  f.content_type = std::string(console_content_type(name));
  f.etag = "\"" +
           core::to_hex(core::sha256(
               core::Bytes(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()))) +
           "\"";
  f.body = std::move(body);
  return f;
}

}  // namespace

std::string_view console_content_type(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".json") || ends(".map")) return "application/json";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".txt")) return "text/plain; charset=utf-8";
  if (ends(".woff2")) return "font/woff2";
  return "application/octet-stream";
}

core::Result<ConsoleFiles> load_console(const fs::path& dir) {
  ConsoleFiles out;
  std::size_t total = 0;
  const fs::path index = dir / "index.html";
  std::error_code ec;
  if (!fs::is_regular_file(index, ec))
    return core::make_error(codes::SERVER_CONSOLE,
                            index.string() + " is missing: not a built console folder");
  auto page = read_console_file(index, "index.html", total);
  if (!page) return std::move(page).error();
  out.index = std::move(*page);
  const fs::path assets = dir / "assets";
  if (!fs::is_directory(assets, ec)) return out;
  for (fs::directory_iterator it(assets, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!servable_name(name) || !it->is_regular_file(ec)) continue;
    if (out.assets.size() == kConsoleMaxFiles)
      return core::make_error(
          codes::SERVER_CONSOLE,
          assets.string() + " holds more than " + std::to_string(kConsoleMaxFiles) + " files");
    auto f = read_console_file(it->path(), name, total);
    if (!f) return std::move(f).error();
    out.assets.emplace(name, std::move(*f));
  }
  if (ec)
    return core::make_error(codes::SERVER_CONSOLE,
                            "cannot list " + assets.string() + ": " + ec.message());
  return out;
}

bool is_console_route(const std::vector<std::string>& seg) {
  if (seg.empty() || seg.size() > 2) return false;
  const auto& top = seg[0];
  if (top == "models" || top == "motions" || top == "packages") return true;
  return top == "live";
}

bool etag_matches(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    auto comma = header.find(',');
    auto item = header.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.starts_with("W/")) item.remove_prefix(2);  // weak comparison (RFC 9110 §13.1.2)
    if (item == "*" || item == etag) return true;
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
  }
  return false;
}

}  // namespace charkit::server
