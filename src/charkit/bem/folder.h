// Package folders: a directory in the §14 ZIP layout (manifest.json plus
// payloads/0000.bin … or 0.bin …, in payloads/ or next to the manifest),
// read as a package, and `unpack` (any package → such a folder).
// Contract: docs/bem/writer.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "charkit/bem/writer.h"
#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// The folder's package as the bytes of an in-memory STORED ZIP, ready for
/// validate_package / Package::open. Only manifest.json and files named as
/// payloads (§14: four digits or the number without leading zeros, ".bin")
/// are read; other files are ignored. Symbolic links inside the folder are
/// refused, never followed. Sizes are checked before reading (manifest
/// 4 MiB, payload 512 MiB, all together 2 GiB). Memory: the folder's
/// payload bytes about twice at peak (files, then the archive).
/// Errors: BEM_FOLDER_* and IO_*.
core::Result<std::vector<std::uint8_t>> read_package_folder(const std::string& dir);

/// The public BEM creator project's `project.json`
/// (`{"manifest": {...}, "payload_files": ["payloads/0000.bin", ...]}`):
/// payload i is the file payload_files[i], a path relative to the
/// project.json's folder ('\\' read as '/'; no absolute path, "..", ':' or
/// symbolic link anywhere on the way, so it stays inside the folder). The
/// manifest is taken as given (not validated here). Sizes are checked before
/// reading (project.json 64 MiB, payload 1 byte .. 512 MiB, all together
/// 2 GiB, at most 16384 payload files). Errors: BEM_PROJECT (at its JSON
/// pointer), BEM_FOLDER_SYMLINK, BEM_PAYLOAD_DECODED_SIZE, BEM_FILE_TOO_LARGE,
/// IO_*, the strict JSON parser's.
core::Result<PackageContent> read_project_file(const std::string& path);

/// True when the file's first bytes look like a project.json: a JSON
/// object (after whitespace) that mentions "payload_files" in its first 64 KiB.
bool looks_like_project_file(const std::string& path);

/// True when path names a directory (a package folder rather than a file).
bool is_package_folder(const std::string& path);

struct UnpackOptions {
  /// Write into a non-empty directory: its manifest.json and payload files
  /// are replaced (other payload files there are removed first).
  bool force = false;
};

struct UnpackStats {
  std::size_t payloads = 0;         ///< payload files written
  std::uint64_t payload_bytes = 0;  ///< their decoded bytes
  std::uint64_t manifest_bytes = 0;
  std::size_t sounds = 0;  ///< §13 driver sounds also written as sounds/<id>.<format>
};

/// Write a single package (binary or ZIP) as a folder: manifest.json byte
/// for byte as stored, each payload decoded into payloads/NNNN.bin (NNNNN
/// from 10000), and each §13 driver sound once more as
/// sounds/<driver id>.<format> (the id reduced to [A-Za-z0-9._-];
/// sound_<payload> when that is empty or starts with a dot; a format outside
/// the §13 list as .bin). The package is opened and every payload decoded
/// and checked by the reader, but its manifest is not validated (unpack is a
/// debugging aid). Refuses a non-empty directory unless options.force.
core::Result<UnpackStats> unpack_package(core::Bytes file, const std::string& dir,
                                         const UnpackOptions& options = {});

}  // namespace charkit::bem
