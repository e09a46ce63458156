#include "charkit/core/mapped_file.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "charkit/core/error_codes.h"

namespace charkit::core {

namespace {
// An empty file cannot be mmapped; point at a static byte instead.
const std::uint8_t kEmpty = 0;
}  // namespace

void MappedFile::unmap() noexcept {
  if (data_ && data_ != &kEmpty) munmap(const_cast<std::uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

MappedFile::~MappedFile() {
  unmap();
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    unmap();  // not this->~MappedFile(): the object has a virtual base (InputHints)
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

namespace {
// Page-aligned [begin, end) of range; inner=true keeps only whole pages inside it.
bool page_span(const std::uint8_t* base, std::size_t size, Bytes range, bool inner,
               std::uintptr_t& begin, std::uintptr_t& end) {
  if (!base || base == &kEmpty || range.empty()) return false;
  if (range.data() < base || range.data() + range.size() > base + size) return false;
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  begin = reinterpret_cast<std::uintptr_t>(range.data());
  end = begin + range.size();
  if (inner) {
    begin = (begin + page - 1) / page * page;
    end = end / page * page;
  } else {
    begin = begin / page * page;
    end = (end + page - 1) / page * page;
  }
  return end > begin;
}
}  // namespace

void MappedFile::will_read(Bytes range) const {
  std::uintptr_t begin = 0, end = 0;
#ifdef MADV_POPULATE_READ
  // Older kernels answer EINVAL; the pages then fault in one by one as before.
  if (page_span(data_, size_, range, false, begin, end))
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
#else
  (void)range;
#endif
}

void MappedFile::done_reading(Bytes range) const {
  std::uintptr_t begin = 0, end = 0;
  if (page_span(data_, size_, range, true, begin, end))
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

Result<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error(codes::IO_OPEN, "cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(codes::IO_NOT_REGULAR, path + " is not a regular file");
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
      return make_error(codes::IO_MAP, "cannot map " + path + ": " + std::strerror(e));
    }
    madvise(p, f.size_, MADV_SEQUENTIAL);
    f.data_ = static_cast<const std::uint8_t*>(p);
  }
  ::close(fd);
  return f;
}

}  // namespace charkit::core
