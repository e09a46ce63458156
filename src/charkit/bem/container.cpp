#include "charkit/bem/container.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include "charkit/bem/error_codes.h"

namespace charkit::bem {

const char* container_kind_name(ContainerKind k) {
  switch (k) {
    case ContainerKind::kBinary:
      return "binary";
    case ContainerKind::kZip:
      return "zip";
    case ContainerKind::kCollection:
      return "collection";
  }
  return "?";
}

const char* codec_name(Codec c) {
  switch (c) {
    case Codec::kRaw:
      return "raw";
    case Codec::kZstd:
      return "zstd";
    case Codec::kZipStored:
      return "zip-stored";
    case Codec::kZipDeflate:
      return "zip-deflate";
  }
  return "?";
}

PayloadBuffer::PayloadBuffer(PayloadBuffer&& o) noexcept
    : data_(std::move(o.data_)),
      capacity_(std::exchange(o.capacity_, 0)),
      control_(o.control_),
      how_(o.how_) {}

PayloadBuffer& PayloadBuffer::operator=(PayloadBuffer&& o) noexcept {
  if (this != &o) {
    drop();
    data_ = std::move(o.data_);
    capacity_ = std::exchange(o.capacity_, 0);
    control_ = o.control_;
    how_ = o.how_;
  }
  return *this;
}

PayloadBuffer::~PayloadBuffer() {
  drop();
}

void PayloadBuffer::drop() {
  data_.reset();
  if (control_ && capacity_) control_->release(capacity_, how_);
  capacity_ = 0;
}

core::Result<std::span<std::uint8_t>> PayloadBuffer::get(std::size_t n) {
  if (n > capacity_) {
    drop();  // release the old buffer before the larger one is held and mapped
    if (control_)
      if (auto st = control_->hold(n, how_, "a decode buffer of " + std::to_string(n) + " bytes");
          !st)
        return std::move(st).error();
    data_ = std::make_unique_for_overwrite<std::uint8_t[]>(n);
    capacity_ = n;
#ifdef MADV_POPULATE_WRITE
    // The decoder writes every byte: map the pages in one call rather than
    // one page fault at a time (several times faster on virtual machines).
    // Older kernels answer EINVAL and the pages fault in as usual.
    constexpr std::size_t kBulk = std::size_t{1} << 20;
    if (n >= kBulk) {
      const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
      auto begin = (reinterpret_cast<std::uintptr_t>(data_.get()) + page - 1) / page * page;
      auto end = (reinterpret_cast<std::uintptr_t>(data_.get()) + n) / page * page;
      if (end > begin) {
        // Huge pages where the kernel offers them: fewer TLB misses while
        // the decoder writes and the checks read the whole buffer.
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
      }
    }
#endif
  }
  return std::span<std::uint8_t>{data_.get(), n};
}

core::Result<std::span<std::uint8_t>> PayloadBuffer::grow(std::size_t n, std::size_t keep) {
  if (n <= capacity_) return std::span<std::uint8_t>{data_.get(), n};
  // The old content stays while the bigger buffer is filled: both are held.
  if (control_)
    if (auto st = control_->hold(n, how_, "a decode buffer of " + std::to_string(n) + " bytes");
        !st)
      return std::move(st).error();
  auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(n);
  keep = std::min(keep, capacity_);
  if (keep) std::memcpy(bigger.get(), data_.get(), keep);
  drop();
  data_ = std::move(bigger);
  capacity_ = n;
  return std::span<std::uint8_t>{data_.get(), n};
}

// ---- DecodeControl ----------------------------------------------------------

struct DecodeControl::Memory {
  std::mutex mutex;
  std::condition_variable released;
  std::uint64_t held = 0;           ///< guarded by mutex
  std::uint64_t held_reusable = 0;  ///< guarded by mutex; part of held
  std::uint64_t peak = 0;           ///< guarded by mutex
};

DecodeControl::DecodeControl(std::uint64_t max_decoded_bytes, const std::atomic<bool>* cancel,
                             std::uint64_t max_memory_bytes)
    : max_(max_decoded_bytes),
      cancel_(cancel),
      max_memory_(max_memory_bytes),
      memory_(std::make_unique<Memory>()) {}

DecodeControl::~DecodeControl() = default;

core::Status DecodeControl::hold(std::uint64_t n, Hold how, const std::string& what) {
  Memory& m = *memory_;
  std::unique_lock lock(m.mutex);
  for (;;) {
    if (max_memory_ == 0 || (n <= max_memory_ && m.held <= max_memory_ - n)) {
      m.held += n;
      if (how == Hold::kReusable) m.held_reusable += n;
      m.peak = std::max(m.peak, m.held);
      return core::Ok{};
    }
    // A reusable buffer waits while others of its kind may still be given
    // back (a waiter holds none: PayloadBuffer::get releases first), unless
    // even their return would leave too little.
    const bool may_wait = how == Hold::kReusable && m.held_reusable > 0 && n <= max_memory_ &&
                          m.held - m.held_reusable <= max_memory_ - n;
    if (!may_wait) break;
    m.released.wait_for(lock, std::chrono::milliseconds(50));
    if (cancelled()) return core::make_error(kCancelledCode, "decoding was cancelled");
  }
  memory_exceeded_ = true;
  return core::make_error(kMemoryBudgetCode,
                          what + " beside the " + std::to_string(m.held) +
                              " bytes already held would pass the memory budget of " +
                              std::to_string(max_memory_) + " bytes for this package");
}

void DecodeControl::release(std::uint64_t n, Hold how) {
  Memory& m = *memory_;
  {
    std::lock_guard lock(m.mutex);
    m.held -= std::min(n, m.held);
    if (how == Hold::kReusable) m.held_reusable -= std::min(n, m.held_reusable);
  }
  m.released.notify_all();
}

std::uint64_t DecodeControl::memory_left() const {
  if (max_memory_ == 0) return std::numeric_limits<std::uint64_t>::max();
  std::lock_guard lock(memory_->mutex);
  return max_memory_ - std::min(max_memory_, memory_->held);
}

std::uint64_t DecodeControl::peak_memory() const {
  std::lock_guard lock(memory_->mutex);
  return memory_->peak;
}

core::Status DecodeControl::charge(std::uint64_t n, const std::string& what) {
  if (auto p = poll(); !p) return p;
  if (max_ == 0) {
    used_ += n;
    return core::Ok{};
  }
  std::uint64_t used = used_.load();
  do {
    if (n > max_ || used > max_ - n) {
      exceeded_ = true;
      return core::make_error(kDecodeBudgetCode,
                              what + ": decoding " + std::to_string(n) + " more bytes after " +
                                  std::to_string(used) + " would pass the budget of " +
                                  std::to_string(max_) + " decoded bytes for this package");
    }
  } while (!used_.compare_exchange_weak(used, used + n));
  return core::Ok{};
}

core::Status DecodeControl::poll() const {
  if (cancelled()) return core::make_error(kCancelledCode, "decoding was cancelled");
  return core::Ok{};
}

core::Result<Bytes> Package::read_payload_into(std::uint32_t id, PayloadBuffer& scratch) const {
  if (auto st = prepare_payload(id); !st) return std::move(st).error();
  return decode_prepared(id, scratch);
}

core::Result<PayloadData> Package::read_payload(std::uint32_t id) const {
  PayloadBuffer buf(control_);
  auto r = read_payload_into(id, buf);
  if (!r) return std::move(r).error();
  Bytes view = *r;
  if (buf.holds(view)) return PayloadData(std::move(buf), view);
  return PayloadData(view);
}

core::Result<PayloadData> Package::read_member(std::size_t) const {
  return core::make_error(codes::BEM_NOT_COLLECTION, "not a collection bundle");
}

const char* sniffed_container_name(Bytes file) {
  const auto kind = sniff_container(file);
  return kind ? container_kind_name(*kind) : "unknown";
}

std::optional<ContainerKind> sniff_container(Bytes file) {
  if (file.size() >= 8 && std::equal(kMagic, kMagic + 8, file.begin()))
    return ContainerKind::kBinary;
  if (file.size() >= 4 && file[0] == 0x50 && file[1] == 0x4B && file[2] == 0x03 && file[3] == 0x04)
    return ContainerKind::kZip;
  return std::nullopt;
}

std::unique_ptr<Package> Package::open(Bytes file, core::Report& report, DecodeControl* control) {
  // Recognised by content, never by file extension (§14).
  const auto kind = sniff_container(file);
  if (kind == ContainerKind::kBinary) return open_binary(file, report, control);
  if (kind == ContainerKind::kZip) return open_zip(file, report, control);
  report.error(codes::BEM_CONTAINER_UNKNOWN, "§2", core::Location::at_offset(0),
               "not a BEM package: neither the BEM magic \"BEM\\0PKG\\0\" nor a ZIP local header "
               "(PK\\3\\4)");
  return nullptr;
}

}  // namespace charkit::bem
