#include "charkit/core/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace charkit::core {

namespace {
// An empty file cannot be mmapped; point at a static byte instead.
const std::uint8_t kEmpty = 0;
}  // namespace

MappedFile::~MappedFile() {
  if (data_ && data_ != &kEmpty) munmap(const_cast<std::uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    this->~MappedFile();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

void MappedFile::drop_pages(Bytes range) const {
  if (!data_ || data_ == &kEmpty || range.empty()) return;
  if (range.data() < data_ || range.data() + range.size() > data_ + size_) return;
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(range.data());
  std::uintptr_t end = begin + range.size();
  begin = (begin + page - 1) / page * page;  // only pages wholly inside the range
  end = end / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("IO_OPEN", "cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error("IO_NOT_REGULAR", path + " is not a regular file");
  }
  MappedFile f;
  f.size_ = static_cast<std::size_t>(st.st_size);
  if (f.size_ == 0) {
    f.data_ = &kEmpty;
  } else {
    void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      f.size_ = 0;
      return make_error("IO_MAP", "cannot map " + path + ": " + std::strerror(e));
    }
    madvise(p, f.size_, MADV_SEQUENTIAL);
    f.data_ = static_cast<const std::uint8_t*>(p);
  }
  ::close(fd);
  return f;
}

}  // namespace charkit::core
