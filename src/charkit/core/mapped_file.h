// Read-only memory mapping of a file: decoders look at the bytes in place
// instead of copying the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::core {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// Map path read-only. Errors: IO_OPEN, IO_NOT_REGULAR, IO_MAP.
  static Result<MappedFile> open(const std::string& path);

  Bytes bytes() const { return {data_, size_}; }
  /// Tell the kernel that the whole pages inside range (a part of bytes())
  /// will not be read again soon: their memory is released and re-read from
  /// the file only if touched. Ranges outside the mapping are ignored.
  void drop_pages(Bytes range) const;
  std::size_t size() const { return size_; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace charkit::core
