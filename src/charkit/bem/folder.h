// Package folders: a directory in the §14 ZIP layout (manifest.json plus
// payloads/0000.bin … or 0.bin …, in payloads/ or next to the manifest),
// read as a package, and `unpack` (any package → such a folder).
// Contract: docs/bem/writer.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
};

/// Write a single package (binary or ZIP) as a folder: manifest.json byte
/// for byte as stored, each payload decoded into payloads/NNNN.bin (NNNNN
/// from 10000). The package is opened and every payload decoded and checked
/// by the reader, but its manifest is not validated (unpack is a debugging
/// aid). Refuses a non-empty directory unless options.force.
core::Result<UnpackStats> unpack_package(core::Bytes file, const std::string& dir,
                                         const UnpackOptions& options = {});

}  // namespace charkit::bem
