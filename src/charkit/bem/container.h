// BEM containers: the binary container (§2) and the ZIP container (§14).
// A Package is a view over the file bytes (memory-mapped by the caller):
// opening it checks the container structure; payloads are decoded one at a
// time on request, and nothing copies the whole file.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/bem/error_codes.h"
#include "charkit/core/bytes.h"
#include "charkit/core/report.h"
#include "charkit/core/result.h"

namespace charkit::bem {

using core::Bytes;

inline constexpr std::uint8_t kMagic[8] = {0x42, 0x45, 0x4D, 0x00, 0x50, 0x4B, 0x47, 0x00};
inline constexpr std::uint32_t kHeaderSize = 40;
inline constexpr std::uint32_t kDirectoryEntrySize = 32;
inline constexpr std::uint64_t kMaxFileSize = 2ull << 30;       // 2 GiB (§2)
inline constexpr std::uint64_t kMaxManifestSize = 4ull << 20;   // 4 MiB (§2)
inline constexpr std::uint64_t kMaxPayloadSize = 512ull << 20;  // 512 MiB (§2)
inline constexpr int kMaxMinor = 5;

enum class ContainerKind { kBinary, kZip, kCollection };
const char* container_kind_name(ContainerKind k);

/// The container a file is, from its first bytes, never its name (§14): the
/// BEM magic → kBinary, a ZIP local file header (PK\3\4) → kZip (a ZIP may
/// still turn out to be a collection bundle once opened); nullopt: neither.
/// The one sniffer that Package::open, inspect and the CLI use.
std::optional<ContainerKind> sniff_container(Bytes file);
/// container_kind_name of sniff_container, or "unknown": how validation
/// reports (CLI and server alike) a file it could not open.
const char* sniffed_container_name(Bytes file);

/// Payload codecs as they appear in the binary directory (§2) and, for ZIP
/// members, the ZIP compression method.
enum class Codec : std::uint32_t {
  kRaw = 0,
  kZstd = 1,
  kZipStored = 0x100,
  kZipDeflate = 0x108,
};
const char* codec_name(Codec c);

struct Header {
  std::uint16_t major = 0;
  std::uint16_t minor = 0;
  std::uint32_t header_size = 0;
  std::uint64_t file_size = 0;
  std::uint64_t manifest_size = 0;
  std::uint32_t payload_count = 0;
  std::uint32_t flags = 0;
};

struct PayloadInfo {
  bool present = true;  ///< false: a ZIP package lacks this payload number
  Codec codec = Codec::kRaw;
  std::uint64_t offset = 0;  ///< binary: absolute file offset; ZIP: local header offset
  std::uint64_t stored_size = 0;
  std::uint64_t decoded_size = 0;
  std::uint64_t entry_offset = 0;  ///< binary: offset of the directory entry
  std::string member;              ///< ZIP: entry name
};

/// Bounds the work of decoding one package: a budget on the bytes decoded
/// (zstd and DEFLATE payloads, ZIP entries, collection members and what is
/// decoded inside them), a budget on the memory held at once for decoded
/// data (payload and member buffers, the parsed manifest), and a cancel
/// flag, polled between payloads and every few MiB inside a ZIP entry. One
/// control is shared by a package and the members opened from it
/// (docs/bem/zip.md §Budgets). Thread-safe.
class DecodeControl {
 public:
  /// max_decoded_bytes, max_memory_bytes 0: no budget; cancel may be null.
  explicit DecodeControl(std::uint64_t max_decoded_bytes = 0,
                         const std::atomic<bool>* cancel = nullptr,
                         std::uint64_t max_memory_bytes = 0);
  ~DecodeControl();
  DecodeControl(const DecodeControl&) = delete;
  DecodeControl& operator=(const DecodeControl&) = delete;

  /// Counts n more decoded bytes, announced before they are decoded (a
  /// declared size, which the reader then enforces). BEM_DECODE_BUDGET, and
  /// nothing counted, when they would pass the budget; BEM_CANCELLED when the
  /// flag is up.
  core::Status charge(std::uint64_t n, const std::string& what);
  /// BEM_CANCELLED when the flag is up.
  core::Status poll() const;
  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
  bool budget_exceeded() const { return exceeded_.load(); }
  std::uint64_t decoded_bytes() const { return used_.load(); }
  std::uint64_t max_decoded_bytes() const { return max_; }

  /// How a hold waits for memory others hold.
  enum class Hold {
    kNow,       ///< refused at once when the budget is short
    kReusable,  ///< a worker's reusable buffer: while other reusable buffers
                ///< hold memory the hold waits for them to be released
                ///< (they are, once their workers finish), and is refused
                ///< only when it cannot fit beside what stays held
  };
  /// Holds n more bytes of decoded data against the memory budget.
  /// BEM_MEMORY_BUDGET (nothing held) when they cannot fit; BEM_CANCELLED
  /// when the flag goes up while waiting.
  core::Status hold(std::uint64_t n, Hold how, const std::string& what);
  /// Gives back n bytes of a hold of the same kind.
  void release(std::uint64_t n, Hold how);
  /// Records that the memory budget stopped the work (a limit derived from
  /// it refused the input before anything was held).
  void note_memory_exceeded() { memory_exceeded_ = true; }
  bool memory_exceeded() const { return memory_exceeded_.load(); }
  /// Bytes the memory budget can still hold (max when there is no budget).
  std::uint64_t memory_left() const;
  /// The most bytes held at once so far.
  std::uint64_t peak_memory() const;
  std::uint64_t max_memory_bytes() const { return max_memory_; }

 private:
  struct Memory;
  std::uint64_t max_;
  const std::atomic<bool>* cancel_;
  std::atomic<std::uint64_t> used_{0};
  std::atomic<bool> exceeded_{false};
  std::uint64_t max_memory_;
  std::atomic<bool> memory_exceeded_{false};
  std::unique_ptr<Memory> memory_;
};

/// Error codes of DecodeControl.
inline constexpr core::ErrorCode kDecodeBudgetCode = codes::BEM_DECODE_BUDGET;
inline constexpr core::ErrorCode kMemoryBudgetCode = codes::BEM_MEMORY_BUDGET;
inline constexpr core::ErrorCode kCancelledCode = codes::BEM_CANCELLED;

/// Reusable output buffer for decoded payloads. It grows to the largest
/// request and never zero-fills, so decoding a whole package faults each
/// page in once instead of once per payload. A buffer given a DecodeControl
/// holds its capacity against that control's memory budget.
class PayloadBuffer {
 public:
  PayloadBuffer() = default;
  /// control may be null (nothing counted); it must outlive the buffer.
  explicit PayloadBuffer(DecodeControl* control,
                         DecodeControl::Hold how = DecodeControl::Hold::kNow)
      : control_(control), how_(how) {}
  PayloadBuffer(PayloadBuffer&& o) noexcept;
  PayloadBuffer& operator=(PayloadBuffer&& o) noexcept;
  ~PayloadBuffer();

  /// n writable, uninitialised bytes (valid until the next call);
  /// BEM_MEMORY_BUDGET when the memory budget cannot hold them (the old
  /// content is then gone), BEM_CANCELLED when cancelled while waiting.
  core::Result<std::span<std::uint8_t>> get(std::size_t n);
  /// n bytes whose first `keep` (≤ the current capacity) are the current
  /// content; used to grow a buffer as data arrives. On an error the old
  /// content stays.
  core::Result<std::span<std::uint8_t>> grow(std::size_t n, std::size_t keep);
  std::size_t capacity() const { return capacity_; }
  /// Whether b points into this buffer.
  bool holds(Bytes b) const {
    return data_ && b.data() >= data_.get() && b.data() < data_.get() + capacity_;
  }

 private:
  void drop();
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t capacity_ = 0;
  DecodeControl* control_ = nullptr;
  DecodeControl::Hold how_ = DecodeControl::Hold::kNow;
};

/// Decoded payload bytes: a view into the mapped file (raw payloads) or an
/// owned buffer (decoded ones).
class PayloadData {
 public:
  PayloadData() = default;
  explicit PayloadData(Bytes view) : view_(view) {}
  PayloadData(PayloadBuffer owned, Bytes view) : owned_(std::move(owned)), view_(view) {}
  Bytes bytes() const { return view_; }
  std::size_t size() const { return view_.size(); }

 private:
  PayloadBuffer owned_;  // moving a unique_ptr keeps view_ valid
  Bytes view_;
};

/// A member of a collection bundle (a .bem inside a ZIP).
struct CollectionMember {
  std::string name;  ///< entry name in the ZIP (never used as a path)
  std::uint64_t local_offset = 0;
  std::uint64_t stored_size = 0;
  std::uint64_t decoded_size = 0;
};

class Package {
 public:
  virtual ~Package() = default;

  /// Open any container by its first bytes: "BEM\0PKG\0" binary, "PK\3\4" ZIP
  /// (single package or collection). Structural problems go to report; returns
  /// nullptr when nothing more can be read (the report then has errors).
  /// `control` (may be null, must outlive the package) bounds and cancels
  /// every decode of this package, the ZIP manifest included.
  static std::unique_ptr<Package> open(Bytes file, core::Report& report,
                                       DecodeControl* control = nullptr);

  virtual ContainerKind kind() const = 0;
  /// Binary: the header's minor. ZIP: the manifest's "format_version" hint
  /// if any (set by the validator once the manifest is parsed).
  std::optional<int> declared_minor() const { return declared_minor_; }
  void set_declared_minor(std::optional<int> m) { declared_minor_ = m; }

  /// UTF-8 manifest text (binary: a view of the file; ZIP: manifest.json).
  std::string_view manifest_text() const { return manifest_text_; }
  /// Byte offset of the manifest in the file (binary), 0 for ZIP.
  std::uint64_t manifest_offset() const { return manifest_offset_; }
  /// ZIP: the entry name of the manifest ("manifest.json" or "dir/manifest.json").
  const std::string& manifest_member() const { return manifest_member_; }

  const std::vector<PayloadInfo>& payloads() const { return payloads_; }
  std::uint32_t payload_count() const { return static_cast<std::uint32_t>(payloads_.size()); }
  /// Binary header (kind() == kBinary only).
  const Header& header() const { return header_; }
  /// Collection bundles: the .bem members.
  const std::vector<CollectionMember>& members() const { return members_; }
  /// Bytes of the whole file.
  Bytes file() const { return file_; }

  /// Decode payload id and check its integrity (zstd: exactly one frame over
  /// the stored range with content size == decoded_size, no dictionary; ZIP:
  /// CRC and sizes). The bytes are a view of the file (raw payloads) or live
  /// in scratch until its next use. Errors carry the location of the payload.
  /// The same as prepare_payload followed by decode_prepared.
  core::Result<Bytes> read_payload_into(std::uint32_t id, PayloadBuffer& scratch) const;
  /// The first half of read_payload_into: the checks that need no decoding
  /// (the id, the declared size, the zstd frame header) and the charge of
  /// the decoded size to the decode budget. Cheap; a caller decoding
  /// payloads on several threads calls it in id order, so the budget is
  /// spent (and runs out) exactly as in one pass.
  virtual core::Status prepare_payload(std::uint32_t id) const = 0;
  /// The second half: decode payload id, which prepare_payload accepted,
  /// into scratch. Different ids may be decoded on different threads at
  /// once (ZIP entries are read one at a time: libzip's handle is shared).
  virtual core::Result<Bytes> decode_prepared(std::uint32_t id, PayloadBuffer& scratch) const = 0;
  /// read_payload_into with a buffer of its own.
  core::Result<PayloadData> read_payload(std::uint32_t id) const;
  /// Collection bundles: the bytes of member i (decompressed). The buffer
  /// grows with the bytes actually decoded, never to a declared size ahead
  /// of them.
  virtual core::Result<PayloadData> read_member(std::size_t i) const;

  /// The budget and cancel flag of open() (null: unbounded).
  DecodeControl* decode_control() const { return control_; }

 protected:
  Bytes file_;
  std::optional<int> declared_minor_;
  std::string_view manifest_text_;
  std::string manifest_owned_;
  std::uint64_t manifest_offset_ = 0;
  std::string manifest_member_;
  std::vector<PayloadInfo> payloads_;
  std::vector<CollectionMember> members_;
  Header header_;
  DecodeControl* control_ = nullptr;
};

/// One 32-byte directory entry as stored (§2), before any rule is checked.
struct DirectoryEntry {
  std::uint32_t codec = 0;
  std::uint32_t reserved = 0;
  std::uint64_t offset = 0;
  std::uint64_t stored_size = 0;
  std::uint64_t decoded_size = 0;
};
/// Decode the 40-byte header without checking its rules; false when the file
/// is shorter than a header or does not start with the magic.
bool decode_header(Bytes file, Header& out);
/// Decode the directory entry at byte offset `at` without checking its
/// rules; false when it does not lie inside the file.
bool decode_directory_entry(Bytes file, std::uint64_t at, DirectoryEntry& out);

/// Binary container (§2). Exposed for tests and tools.
std::unique_ptr<Package> open_binary(Bytes file, core::Report& report,
                                     DecodeControl* control = nullptr);
/// ZIP container (§14), single package or collection bundle. Entries whose
/// local data overlap (BEM_ZIP_OVERLAP) make the archive unreadable.
std::unique_ptr<Package> open_zip(Bytes file, core::Report& report,
                                  DecodeControl* control = nullptr);

/// Check one zstd payload frame and decode it into out (out.size() == decoded_size).
/// Error codes: BEM_ZSTD_FRAME, BEM_ZSTD_SIZE, BEM_ZSTD_DICTIONARY, BEM_ZSTD_TRAILING,
/// BEM_ZSTD_DATA.
core::Status decode_zstd_payload(Bytes stored, std::uint64_t decoded_size,
                                 std::vector<std::uint8_t>& out);
/// The frame rules that need no decoding (first part of decode_zstd_payload).
core::Status check_zstd_frame(Bytes stored, std::uint64_t decoded_size);
/// The same into caller memory: out.size() must equal decoded_size, which is
/// checked against the frame before anything is written.
core::Status decode_zstd_payload(Bytes stored, std::span<std::uint8_t> out);
/// Decode a frame that check_zstd_frame accepted without holding its output:
/// `sink` gets the decoded bytes in order, in pieces of exactly piece.size()
/// bytes (the last one shorter) that live in `piece` during the call. The
/// decoder's window (the frame's, 2 MiB at zstd's default levels) and
/// `piece` are all the memory it uses. Fails (BEM_ZSTD_DATA, BEM_ZSTD_SIZE)
/// where decode_zstd_payload fails, though the messages may differ, and also
/// when the window is over zstd's default limit of 128 MiB.
core::Status stream_zstd_payload(Bytes stored, std::uint64_t decoded_size,
                                 std::span<std::uint8_t> piece,
                                 const std::function<void(Bytes)>& sink);

}  // namespace charkit::bem
