#include "package_input.h"

#include "charkit/bem/folder.h"
#include "charkit/core/error_codes.h"
#include "commands.h"

namespace charkit::app {

core::Result<PackageInput> PackageInput::open(const std::string& path) {
  PackageInput in;
  if (bem::is_package_folder(path)) {
    auto r = bem::read_package_folder(path);
    if (!r) return std::move(r).error();
    in.folder_bytes_ = std::move(*r);
    return in;
  }
  auto r = core::MappedFile::open(path);
  if (!r) return std::move(r).error();
  in.mapped_.emplace(std::move(*r));
  return in;
}

core::Bytes PackageInput::bytes() const {
  if (mapped_) return mapped_->bytes();
  return {folder_bytes_.data(), folder_bytes_.size()};
}

int input_error_exit_code(const core::Error& e) {
  return core::is_io_error(e) ? kExitUsage : kExitInvalid;
}

}  // namespace charkit::app
