// Package folders (§14 layout on disk) and unpack. A folder is read by
// packing its manifest and payload files into a STORED ZIP in memory and
// handing that to the ZIP reader, so folders follow exactly the ZIP rules
// (payload names, duplicates, gaps) without a second reader.
#include "charkit/bem/folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "charkit/bem/container.h"
#include "charkit/bem/detail/payload_name.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/writer.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {
namespace {

namespace fs = std::filesystem;
using core::make_error;

using detail::kMaxPayloadNumber;

/// §14 / Q20: "0007.bin" or "7.bin", within the §11 directory limit.
std::optional<std::uint32_t> payload_number(std::string_view file) {
  auto n = detail::payload_number(file);
  if (n && *n > kMaxPayloadNumber) return std::nullopt;
  return n;
}

struct FileCloser {
  int fd = -1;
  ~FileCloser() {
    if (fd >= 0) ::close(fd);
  }
};

core::Error io_error(core::ErrorCode code, const fs::path& p, const std::string& what) {
  return make_error(code, p.string() + ": " + what);
}

/// Read a regular file of at most max_size bytes; never through a symlink.
core::Result<std::vector<std::uint8_t>> read_file(const fs::path& p, std::uint64_t max_size,
                                                  core::ErrorCode size_code) {
  FileCloser f{::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (f.fd < 0)
    return io_error(errno == ELOOP ? codes::BEM_FOLDER_SYMLINK : core::codes::IO_OPEN, p,
                    errno == ELOOP ? "symbolic links are not followed" : std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return io_error(core::codes::IO_NOT_REGULAR, p, "not a regular file");
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_size)
    return io_error(
        size_code, p,
        std::to_string(size) + " bytes; at most " + std::to_string(max_size) + " allowed");
  std::vector<std::uint8_t> data(static_cast<std::size_t>(size));
  std::size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(f.fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error(core::codes::IO_READ, p, "short read");
    got += static_cast<std::size_t>(n);
  }
  return data;
}

core::Status write_file(const fs::path& p, core::Bytes data) {
  FileCloser f{::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (f.fd < 0) return io_error(core::codes::IO_WRITE, p, std::strerror(errno));
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(f.fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return io_error(core::codes::IO_WRITE, p, std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  if (::close(f.fd) != 0) {
    f.fd = -1;
    return io_error(core::codes::IO_WRITE, p, std::strerror(errno));
  }
  f.fd = -1;
  return core::Ok{};
}

struct FoundPayload {
  std::uint32_t number = 0;
  std::string member;  ///< name inside the archive: "payloads/0001.bin" or "1.bin"
  fs::path path;
  std::uint64_t size = 0;
};

/// The payload-named entries of one folder level (no recursion).
core::Status scan(const fs::path& dir, const std::string& prefix, std::vector<FoundPayload>& out) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return io_error(core::codes::IO_OPEN, dir, ec.message());
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    auto number = payload_number(name);
    if (!number) continue;
    auto st = entry.symlink_status(ec);
    if (ec) return io_error(core::codes::IO_OPEN, entry.path(), ec.message());
    if (fs::is_symlink(st))
      return io_error(codes::BEM_FOLDER_SYMLINK, entry.path(), "symbolic links are not followed");
    if (!fs::is_regular_file(st))
      return io_error(core::codes::IO_NOT_REGULAR, entry.path(), "not a file");
    auto size = entry.file_size(ec);
    if (ec) return io_error(core::codes::IO_OPEN, entry.path(), ec.message());
    out.push_back({*number, prefix + name, entry.path(), size});
  }
  return core::Ok{};
}

std::string payload_file_name(std::size_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04zu.bin", id);
  return buf;
}

}  // namespace

core::Result<PackageContent> read_project_file(const std::string& path) {
  const fs::path project(path);
  auto text = read_file(project, std::uint64_t{64} << 20, codes::BEM_PROJECT);
  if (!text) return std::move(text).error();
  auto json = core::parse_json_strict(core::as_chars(*text));
  if (!json) return std::move(json).error();
  auto bad = [&](std::string message, std::string pointer) {
    return core::error_at_pointer(codes::BEM_PROJECT, std::move(message), std::move(pointer));
  };
  if (!json->is_object()) return bad("a project is a JSON object", "");
  if (!json->contains("manifest") || !(*json)["manifest"].is_object())
    return bad("\"manifest\" is the package's manifest object", "/manifest");
  if (!json->contains("payload_files") || !(*json)["payload_files"].is_array())
    return bad("\"payload_files\" is an array of paths, one per payload id", "/payload_files");
  const core::Json& files = (*json)["payload_files"];
  if (files.size() > 16384) return bad("more than 16384 payload files (§11)", "/payload_files");
  std::error_code ec;
  const fs::path root = fs::absolute(project, ec).parent_path();
  if (ec) return io_error(core::codes::IO_OPEN, project, ec.message());
  PackageContent out;
  out.manifest = std::move((*json)["manifest"]);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string ptr = "/payload_files/" + std::to_string(i);
    if (!files[i].is_string()) return bad("a payload file is a path string", ptr);
    std::string name = files[i].get<std::string>();
    std::replace(name.begin(), name.end(), '\\', '/');
    const fs::path rel(name);
    if (name.empty() || rel.is_absolute() || name.find(':') != std::string::npos)
      return bad("\"" + name + "\" is not a relative path inside the project's folder", ptr);
    // Every component on the way: no "..", no symbolic link.
    fs::path at = root;
    for (const fs::path& part : rel) {
      if (part == "..") return bad("\"" + name + "\" leaves the project's folder (\"..\")", ptr);
      if (part.empty() || part == ".") continue;
      at /= part;
      auto st = fs::symlink_status(at, ec);
      if (!ec && fs::is_symlink(st))
        return io_error(codes::BEM_FOLDER_SYMLINK, at, "symbolic links are not followed");
    }
    auto size = fs::file_size(at, ec);
    if (ec) return io_error(core::codes::IO_OPEN, at, ec.message());
    if (size == 0 || size > kMaxPayloadSize)
      return io_error(codes::BEM_PAYLOAD_DECODED_SIZE, at,
                      std::to_string(size) + " bytes; §2 allows 1 byte .. 512 MiB");
    total += size;
    if (total > kMaxFileSize)
      return io_error(codes::BEM_FILE_TOO_LARGE, project,
                      "the project's payload files exceed 2 GiB");
    auto bytes = read_file(at, kMaxPayloadSize, codes::BEM_PAYLOAD_DECODED_SIZE);
    if (!bytes) return std::move(bytes).error();
    out.payloads.push_back(std::move(*bytes));
  }
  return out;
}

bool looks_like_project_file(const std::string& path) {
  FileCloser f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return false;
  std::string head(65536, '\0');
  const ssize_t n = ::read(f.fd, head.data(), head.size());
  if (n <= 0) return false;
  head.resize(static_cast<std::size_t>(n));
  const auto first = head.find_first_not_of(" \t\r\n");
  return first != std::string::npos && head[first] == '{' &&
         head.find("\"payload_files\"") != std::string::npos;
}

bool is_package_folder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

core::Result<std::vector<std::uint8_t>> read_package_folder(const std::string& dir_name) {
  const fs::path dir(dir_name);
  if (!is_package_folder(dir_name)) return io_error(core::codes::IO_OPEN, dir, "not a directory");
  std::error_code ec;
  const fs::path manifest_path = dir / "manifest.json";
  auto mst = fs::symlink_status(manifest_path, ec);
  if (ec || !fs::exists(mst))
    return io_error(codes::BEM_FOLDER_NO_MANIFEST, dir, "no manifest.json in the folder (§14)");
  auto manifest = read_file(manifest_path, kMaxManifestSize, codes::BEM_MANIFEST_SIZE);
  if (!manifest) return std::move(manifest).error();

  std::vector<FoundPayload> found;
  if (auto st = scan(dir, "", found); !st) return std::move(st).error();
  const fs::path sub = dir / "payloads";
  auto sst = fs::symlink_status(sub, ec);
  if (!ec && fs::is_symlink(sst))
    return io_error(codes::BEM_FOLDER_SYMLINK, sub, "symbolic links are not followed");
  if (!ec && fs::is_directory(sst))
    if (auto st = scan(sub, "payloads/", found); !st) return std::move(st).error();

  std::uint64_t total = manifest->size();
  for (const auto& f : found) {
    if (f.size > kMaxPayloadSize)
      return io_error(codes::BEM_PAYLOAD_DECODED_SIZE, f.path,
                      std::to_string(f.size) + " bytes; §2 allows at most 512 MiB");
    total += f.size;
    if (total > kMaxFileSize)
      return io_error(codes::BEM_FILE_TOO_LARGE, dir, "the folder's package files exceed 2 GiB");
  }
  // Deterministic archive order; the ZIP reader reports duplicate numbers.
  std::sort(found.begin(), found.end(), [](const FoundPayload& a, const FoundPayload& b) {
    return a.number != b.number ? a.number < b.number : a.member < b.member;
  });
  std::vector<std::vector<std::uint8_t>> data;
  data.reserve(found.size());
  for (const auto& f : found) {
    auto bytes = read_file(f.path, kMaxPayloadSize, codes::BEM_PAYLOAD_DECODED_SIZE);
    if (!bytes) return std::move(bytes).error();
    data.push_back(std::move(*bytes));
  }
  std::vector<ZipFileInput> files;
  files.push_back({"manifest.json", *manifest});
  for (std::size_t i = 0; i < found.size(); ++i) files.push_back({found[i].member, data[i]});
  return build_stored_zip(files);
}

core::Result<UnpackStats> unpack_package(core::Bytes file, const std::string& dir_name,
                                         const UnpackOptions& options) {
  core::Report rep;
  auto pkg = Package::open(file, rep);
  if (!pkg || rep.has_errors()) {
    for (const auto& i : rep.issues())
      if (i.severity == core::Severity::kError) return core::Error{i.code, i.message, i.location};
    return make_error(codes::BEM_CONTAINER, "the package cannot be read");
  }
  if (pkg->kind() == ContainerKind::kCollection)
    return make_error(codes::BEM_UNPACK_COLLECTION,
                      "a collection bundle holds several packages; unpack its .bem members");

  const fs::path dir(dir_name);
  std::error_code ec;
  auto st = fs::symlink_status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      return io_error(core::codes::IO_WRITE, dir, "exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !options.force)
      return io_error(codes::BEM_UNPACK_NOT_EMPTY, dir,
                      "the directory is not empty (use --force to replace its package files)");
  } else if (!fs::create_directories(dir, ec)) {
    return io_error(core::codes::IO_WRITE, dir, ec.message());
  }
  const fs::path payload_dir = dir / "payloads";
  if (options.force) {
    // Stale payload files would become part of the package when the folder
    // is read back; remove those (links themselves, never their targets).
    std::vector<fs::path> stale;
    auto pst = fs::symlink_status(payload_dir, ec);
    if (fs::is_directory(pst))
      for (const auto& e : fs::directory_iterator(payload_dir, ec))
        if (payload_number(e.path().filename().string())) stale.push_back(e.path());
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (payload_number(e.path().filename().string())) stale.push_back(e.path());
    for (const auto& p : stale) fs::remove(p, ec);
    if (fs::is_symlink(pst)) fs::remove(payload_dir, ec);
    if (fs::is_symlink(fs::symlink_status(dir / "manifest.json", ec)))
      fs::remove(dir / "manifest.json", ec);
  }
  fs::create_directory(payload_dir, ec);
  if (ec) return io_error(core::codes::IO_WRITE, payload_dir, ec.message());

  UnpackStats stats;
  auto text = pkg->manifest_text();
  if (auto w = write_file(dir / "manifest.json", core::as_bytes(text)); !w)
    return std::move(w).error();
  stats.manifest_bytes = text.size();
  PayloadBuffer scratch(pkg->decode_control());
  for (std::uint32_t id = 0; id < pkg->payload_count(); ++id) {
    if (!pkg->payloads()[id].present) continue;
    auto data = pkg->read_payload_into(id, scratch);
    if (!data) return std::move(data).error();
    if (auto w = write_file(payload_dir / payload_file_name(id), *data); !w)
      return std::move(w).error();
    ++stats.payloads;
    stats.payload_bytes += data->size();
  }
  // §13 driver sounds, also under sounds/<driver id>.<format>: a copy named
  // so that a player or an editor opens it (payloads/ keeps the package's own
  // names, which the folder reads back). The manifest is not validated here,
  // so every field is checked as it is used.
  auto manifest = core::parse_json_strict(text);
  if (!manifest || !manifest->is_object() || !manifest->contains("drivers") ||
      !(*manifest)["drivers"].is_array())
    return stats;
  std::vector<std::string> used;
  for (const core::Json& d : (*manifest)["drivers"]) {
    if (!d.is_object() || !d.contains("sound") || !d["sound"].is_object()) continue;
    const core::Json& snd = d["sound"];
    if (!snd.contains("payload") || !snd["payload"].is_number_unsigned()) continue;
    const auto id = snd["payload"].get<std::uint64_t>();
    if (id >= pkg->payload_count() || !pkg->payloads()[id].present) continue;
    std::string name = d.contains("id") && d["id"].is_string() ? d["id"].get<std::string>() : "";
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    if (name.size() > 64) name.resize(64);
    if (name.empty() || name.front() == '.') name = "sound_" + std::to_string(id);
    std::string ext = snd.contains("format") && snd["format"].is_string()
                          ? snd["format"].get<std::string>()
                          : "bin";
    static constexpr const char* kFormats[] = {"wav", "mp3", "m4a", "aac", "flac",
                                               "ogg", "wma", "mp4", "bin"};
    if (std::find(std::begin(kFormats), std::end(kFormats), ext) == std::end(kFormats)) ext = "bin";
    std::string sound_file = name + "." + ext;
    for (int n = 2; std::find(used.begin(), used.end(), sound_file) != used.end(); ++n)
      sound_file = name + "_" + std::to_string(n) + "." + ext;
    used.push_back(sound_file);
    fs::create_directory(dir / "sounds", ec);
    auto data = pkg->read_payload_into(static_cast<std::uint32_t>(id), scratch);
    if (!data) return std::move(data).error();
    if (auto w = write_file(dir / "sounds" / sound_file, *data); !w) return std::move(w).error();
    ++stats.sounds;
  }
  return stats;
}

}  // namespace charkit::bem
