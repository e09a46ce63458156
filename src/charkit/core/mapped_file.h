// Read-only memory mapping of a file: decoders look at the bytes in place
// instead of copying the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::core {

/// Hints from a decoder to whoever owns its input bytes: which ranges it is
/// about to read and which it will not read again. A memory mapping uses them
/// to map pages in bulk and to release them early; plain buffers ignore them.
class InputHints {
 public:
  virtual ~InputHints() = default;
  virtual void will_read(Bytes /*range*/) const {}
  virtual void done_reading(Bytes /*range*/) const {}
};

class MappedFile final : public InputHints {
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
  /// Map the pages of range (a part of bytes()) in one call instead of one
  /// page fault at a time. Ranges outside the mapping are ignored.
  void will_read(Bytes range) const override;
  /// The whole pages inside range will not be read again soon: their memory
  /// is released and re-read from the file only if touched.
  void done_reading(Bytes range) const override;
  std::size_t size() const { return size_; }

 private:
  void unmap() noexcept;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace charkit::core
