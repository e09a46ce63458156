// The input of every `charkit bem` command that reads a package: a package
// file (memory-mapped) or a package folder in the ZIP layout (read into an
// in-memory ZIP by bem::read_package_folder).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/mapped_file.h"
#include "charkit/core/result.h"

namespace charkit::app {

class PackageInput {
 public:
  /// Open path as a folder (when it is a package folder) or as a file.
  static core::Result<PackageInput> open(const std::string& path);

  core::Bytes bytes() const;
  /// Paging hints for the validator (mapped files only).
  const core::InputHints* hints() const { return mapped_ ? &*mapped_ : nullptr; }

 private:
  std::optional<core::MappedFile> mapped_;
  std::vector<std::uint8_t> folder_bytes_;
};

/// Exit status for an input that could not be opened: 2 for I/O problems
/// (codes IO_*), 1 for a folder whose content is not a package.
int input_error_exit_code(const core::Error& e);

}  // namespace charkit::app
