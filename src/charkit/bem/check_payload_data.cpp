// Payload pass: decode every payload exactly once and run the content checks
// the manifest passes queued for it (§7 indices and skin weights, §10
// deformation frames, §5 preview PNG). With ValidateOptions::threads > 1,
// several payloads are decoded at once, one buffer per thread; the report is
// the same as one thread's (PayloadPass below says how).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/parallel.h"

namespace charkit::bem {
namespace {

// §7 / reference note: UNorm16 weights sum to 65535 ± 1 % (64880..66190).
constexpr std::uint32_t kUNormSumLo = 64880;
constexpr std::uint32_t kUNormSumHi = 66190;
// §7: Float32 weights sum to 1 ± 0.01.
constexpr double kFloatSumLo = 0.99;
constexpr double kFloatSumHi = 1.01;

template <typename T>
inline T load(const std::uint8_t* p) {
  if constexpr (std::endian::native == std::endian::little) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  } else {
    return core::load_le<T>(p);
  }
}
inline float load_f32(const std::uint8_t* p) {
  return std::bit_cast<float>(load<std::uint32_t>(p));
}

// ---- kernels: one pass each, branch-light, no allocation ----------------

/// Largest index of an index buffer (count = bytes / index_size).
template <typename T>
std::uint32_t max_index(const std::uint8_t* p, std::size_t count) {
  T m = 0;
  for (std::size_t i = 0; i < count; ++i) m = std::max(m, load<T>(p + i * sizeof(T)));
  return static_cast<std::uint32_t>(m);
}

/// Statistics of a skin stream that do not depend on the palette size.
struct SkinStats {
  std::uint32_t max_index = 0;
  std::size_t bad_sum = 0;    ///< vertices whose weights do not sum to 1 ± 0.01
  std::size_t bad_value = 0;  ///< 32-byte: vertices with a negative or non-finite weight
};

/// 4 bytes per vertex: UInt8×4 indices; rigid, only the first index is used (§7).
SkinStats scan_skin4(const std::uint8_t* p, std::size_t vertices) {
  std::uint8_t m = 0;
  for (std::size_t v = 0; v < vertices; ++v) m = std::max(m, p[v * 4]);
  return {m, 0, 0};
}

/// 12 bytes per vertex: UNorm16×4 weights, UInt8×4 indices.
SkinStats scan_skin12(const std::uint8_t* p, std::size_t vertices) {
  std::uint8_t m = 0;
  std::size_t bad = 0;
  for (std::size_t v = 0; v < vertices; ++v) {
    const std::uint8_t* q = p + v * 12;
    std::uint32_t sum = std::uint32_t{load<std::uint16_t>(q)} + load<std::uint16_t>(q + 2) +
                        load<std::uint16_t>(q + 4) + load<std::uint16_t>(q + 6);
    bad += static_cast<std::size_t>((sum < kUNormSumLo) | (sum > kUNormSumHi));
    m = std::max({m, q[8], q[9], q[10], q[11]});
  }
  return {m, bad, 0};
}

bool float_weights_ok(const std::uint8_t* q, bool& value_ok) {
  float w0 = load_f32(q), w1 = load_f32(q + 4), w2 = load_f32(q + 8), w3 = load_f32(q + 12);
  // NaN fails every comparison; +Inf makes the sum fail.
  value_ok = (w0 >= 0.f) & (w1 >= 0.f) & (w2 >= 0.f) & (w3 >= 0.f) & std::isfinite(w0) &
             std::isfinite(w1) & std::isfinite(w2) & std::isfinite(w3);
  double sum = double{w0} + double{w1} + double{w2} + double{w3};
  return (sum >= kFloatSumLo) & (sum <= kFloatSumHi);
}

/// 32 bytes per vertex: Float32×4 weights, UInt32×4 indices (§9).
SkinStats scan_skin32(const std::uint8_t* p, std::size_t vertices) {
  std::uint32_t m = 0;
  std::size_t bad_sum = 0, bad_value = 0;
  for (std::size_t v = 0; v < vertices; ++v) {
    const std::uint8_t* q = p + v * 32;
    bool value_ok = true;
    bool sum_ok = float_weights_ok(q, value_ok);
    bad_sum += static_cast<std::size_t>(!sum_ok);
    bad_value += static_cast<std::size_t>(!value_ok);
    m = std::max({m, load<std::uint32_t>(q + 16), load<std::uint32_t>(q + 20),
                  load<std::uint32_t>(q + 24), load<std::uint32_t>(q + 28)});
  }
  return {m, bad_sum, bad_value};
}

std::uint32_t skin_index(const std::uint8_t* q, std::uint32_t stride, int k) {
  if (stride == 32) return load<std::uint32_t>(q + 16 + 4 * k);
  return q[(stride == 12 ? 8 : 0) + k];
}

// ---- reports: at most one issue per kind, with the first offender and a count ----

// Out-of-range values: how many, and the first (its position and value).
struct Offenders {
  std::size_t count = 0, first = 0;
  std::uint32_t first_value = 0;
  void check(bool bad, std::size_t at, std::uint32_t value) {
    if (bad && count++ == 0) {
      first = at;
      first_value = value;
    }
  }
};

void report_indices(Context& ctx, std::uint32_t id, Bytes b, const PayloadUse& use) {
  std::size_t n = b.size() / use.index_size;
  Offenders bad;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t v = use.index_size == 2 ? load<std::uint16_t>(b.data() + 2 * i)
                                          : load<std::uint32_t>(b.data() + 4 * i);
    bad.check(v >= use.vertex_count, i, v);
  }
  ctx.error(codes::BEM_INDEX_RANGE, "§7", use.pointer,
            "payload " + std::to_string(id) + ": index " + std::to_string(bad.first) + " is " +
                std::to_string(bad.first_value) + " but the mesh has " +
                std::to_string(use.vertex_count) + " vertices (" + std::to_string(bad.count) +
                " indices out of range)");
}

void report_skin_index(Context& ctx, std::uint32_t id, Bytes b, const PayloadUse& use) {
  std::uint32_t stride = use.skin_stride;
  int slots = stride == 4 ? 1 : 4;  // rigid skin uses only the first index
  Offenders bad;
  for (std::size_t v = 0; v < b.size() / stride; ++v)
    for (int k = 0; k < slots; ++k) {
      std::uint32_t idx = skin_index(b.data() + v * stride, stride, k);
      bad.check(idx >= use.palette_size, v, idx);
    }
  ctx.error(codes::BEM_SKIN_INDEX, "§7", use.pointer,
            "payload " + std::to_string(id) + ": vertex " + std::to_string(bad.first) +
                " uses bone " + std::to_string(bad.first_value) + " but the palette has " +
                std::to_string(use.palette_size) + " bones (" + std::to_string(bad.count) +
                " bone indices out of range)");
}

void report_skin_weights(Context& ctx, std::uint32_t id, Bytes b, const PayloadUse& use,
                         const SkinStats& s) {
  std::uint32_t stride = use.skin_stride;
  std::size_t first_sum = 0, first_value = 0;
  bool found_sum = false, found_value = false;
  for (std::size_t v = 0; v < b.size() / stride && !(found_sum && found_value); ++v) {
    const std::uint8_t* q = b.data() + v * stride;
    bool sum_ok = true, value_ok = true;
    if (stride == 12) {
      std::uint32_t sum = std::uint32_t{load<std::uint16_t>(q)} + load<std::uint16_t>(q + 2) +
                          load<std::uint16_t>(q + 4) + load<std::uint16_t>(q + 6);
      sum_ok = sum >= kUNormSumLo && sum <= kUNormSumHi;
    } else {
      sum_ok = float_weights_ok(q, value_ok);
    }
    if (!sum_ok && !found_sum) {
      found_sum = true;
      first_sum = v;
    }
    if (!value_ok && !found_value) {
      found_value = true;
      first_value = v;
    }
  }
  std::string head = "payload " + std::to_string(id) + ": ";
  if (s.bad_value)
    ctx.error(codes::BEM_SKIN_WEIGHT_VALUE, "§7", use.pointer,
              head + "vertex " + std::to_string(first_value) +
                  " has a negative or non-finite Float32 weight (" + std::to_string(s.bad_value) +
                  " vertices); weights must be finite and non-negative");
  if (s.bad_sum)
    ctx.error(codes::BEM_SKIN_WEIGHT_SUM, "§7", use.pointer,
              head + "the weights of vertex " + std::to_string(first_sum) +
                  " do not sum to 1 ± 0.01" + (stride == 12 ? " (UNorm16: 64880..66190)" : "") +
                  " (" + std::to_string(s.bad_sum) + " vertices)");
}

SkinStats scan_skin(Bytes b, std::uint32_t stride) {
  std::size_t vertices = b.size() / stride;
  switch (stride) {
    case 4:
      return scan_skin4(b.data(), vertices);
    case 12:
      return scan_skin12(b.data(), vertices);
    default:
      return scan_skin32(b.data(), vertices);
  }
}

bool is_png(Bytes b) {
  static constexpr std::uint8_t kSig[8] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
  return b.size() >= 8 && std::memcmp(b.data(), kSig, 8) == 0;
}

/// Run the queued checks of one payload over its decoded bytes.
void check_uses(Context& ctx, std::uint32_t id, Bytes b, const std::vector<PayloadUse>& uses) {
  std::map<std::uint32_t, std::uint32_t> max_by_index_size;  // computed once per payload
  std::map<std::uint32_t, SkinStats> skin_by_stride;
  // One report per distinct (size, limit): a payload shared by many draws or
  // meshes is neither rescanned nor reported once per reference.
  std::set<std::pair<std::uint32_t, std::uint32_t>> reported;
  bool weights_reported = false;
  for (const auto& use : uses) {
    switch (use.role) {
      case PayloadRole::kIndices: {
        if (use.index_size != 2 && use.index_size != 4) break;
        if (b.size() % use.index_size != 0) break;  // the size check reported it
        auto it = max_by_index_size.find(use.index_size);
        if (it == max_by_index_size.end()) {
          std::size_t n = b.size() / use.index_size;
          std::uint32_t m = use.index_size == 2 ? max_index<std::uint16_t>(b.data(), n)
                                                : max_index<std::uint32_t>(b.data(), n);
          it = max_by_index_size.emplace(use.index_size, m).first;
        }
        // §7: every index < vertex_count.
        if (it->second >= use.vertex_count &&
            reported.emplace(use.index_size, use.vertex_count).second)
          report_indices(ctx, id, b, use);
        break;
      }
      case PayloadRole::kSkinStream: {
        std::uint32_t stride = use.skin_stride;
        if (stride != 4 && stride != 12 && stride != 32) break;
        if (b.size() != std::uint64_t{use.vertex_count} * stride) break;
        auto it = skin_by_stride.find(stride);
        if (it == skin_by_stride.end())
          it = skin_by_stride.emplace(stride, scan_skin(b, stride)).first;
        const SkinStats& s = it->second;
        if (s.max_index >= use.palette_size &&
            reported.emplace(100 + stride, use.palette_size).second)
          report_skin_index(ctx, id, b, use);
        if ((s.bad_sum || s.bad_value) && !weights_reported) {
          report_skin_weights(ctx, id, b, use, s);
          weights_reported = true;
        }
        break;
      }
      case PayloadRole::kDeformation:
        check_deformation_payload(ctx, id, b, use);
        break;
      case PayloadRole::kPreview:
        if (!is_png(b))
          ctx.error(
              codes::BEM_PREVIEW_PNG, "§5", use.pointer,
              "preview payload " + std::to_string(id) + " is not a PNG file (no PNG signature)");
        break;
      case PayloadRole::kVertexStream:
      case PayloadRole::kTexture:
      case PayloadRole::kSound:
        break;  // size only; checked when the manifest referenced it
    }
  }
}

/// The content checks of check_uses over a payload's bytes piece by piece,
/// with nothing kept: the index maxima and skin statistics merge across
/// pieces, and the PNG signature is in the first piece. clean() says that
/// check_uses on the whole bytes would report nothing; when it would, the
/// caller decodes the payload whole and runs check_uses, so the report is
/// the same either way. Deformation frames need the whole payload:
/// possible() is false for a payload that has one.
class StreamedChecks {
 public:
  /// Every piece but the last is a multiple of this: of 2 and 4 (indices)
  /// and of 4, 12 and 32 (skin strides).
  static constexpr std::size_t kPieceUnit = 96;

  StreamedChecks(const std::vector<PayloadUse>& uses, std::uint64_t size)
      : uses_(uses), size_(size) {
    for (const auto& use : uses) {
      switch (use.role) {
        case PayloadRole::kDeformation:
          possible_ = false;
          break;
        case PayloadRole::kIndices:
          if ((use.index_size == 2 || use.index_size == 4) && size % use.index_size == 0)
            (use.index_size == 2 ? index16_ : index32_) = true;
          break;
        case PayloadRole::kSkinStream:
          if ((use.skin_stride == 4 || use.skin_stride == 12 || use.skin_stride == 32) &&
              size == std::uint64_t{use.vertex_count} * use.skin_stride)
            skin_[stride_slot(use.skin_stride)].wanted = true;
          break;
        case PayloadRole::kPreview:
          png_wanted_ = true;
          break;
        case PayloadRole::kVertexStream:
        case PayloadRole::kTexture:
        case PayloadRole::kSound:
          break;
      }
    }
  }
  bool possible() const { return possible_; }

  void feed(Bytes piece) {
    if (png_wanted_ && first_) png_ = is_png(piece);
    first_ = false;
    if (index16_)
      max16_ = std::max(max16_, max_index<std::uint16_t>(piece.data(), piece.size() / 2));
    if (index32_)
      max32_ = std::max(max32_, max_index<std::uint32_t>(piece.data(), piece.size() / 4));
    for (std::uint32_t stride : {4u, 12u, 32u}) {
      Skin& s = skin_[stride_slot(stride)];
      if (!s.wanted) continue;
      const SkinStats p = scan_skin(piece, stride);
      s.stats.max_index = std::max(s.stats.max_index, p.max_index);
      s.stats.bad_sum += p.bad_sum;
      s.stats.bad_value += p.bad_value;
    }
  }

  /// Whether check_uses would find nothing to report (the whole payload fed).
  bool clean() const {
    for (const auto& use : uses_) {
      if (use.role == PayloadRole::kIndices) {
        if (use.index_size == 2 && index16_ && max16_ >= use.vertex_count) return false;
        if (use.index_size == 4 && index32_ && max32_ >= use.vertex_count) return false;
      } else if (use.role == PayloadRole::kSkinStream) {
        if (use.skin_stride != 4 && use.skin_stride != 12 && use.skin_stride != 32) continue;
        if (size_ != std::uint64_t{use.vertex_count} * use.skin_stride) continue;
        const Skin& s = skin_[stride_slot(use.skin_stride)];
        if (s.stats.max_index >= use.palette_size || s.stats.bad_sum || s.stats.bad_value)
          return false;
      } else if (use.role == PayloadRole::kPreview && !png_) {
        return false;
      }
    }
    return true;
  }

 private:
  struct Skin {
    bool wanted = false;
    SkinStats stats;
  };
  static std::size_t stride_slot(std::uint32_t stride) {
    return stride == 4 ? 0 : stride == 12 ? 1 : 2;
  }

  const std::vector<PayloadUse>& uses_;
  const std::uint64_t size_;
  bool possible_ = true;
  bool first_ = true;
  bool index16_ = false, index32_ = false;
  std::uint32_t max16_ = 0, max32_ = 0;
  Skin skin_[3];
  bool png_wanted_ = false, png_ = false;
};

core::Location payload_location(const PayloadInfo& info) {
  core::Location loc = core::Location::at_offset(info.offset);
  loc.member = info.member;
  return loc;
}

bool stops_the_pass(const std::string& code) {
  return code == codes::BEM_DECODE_BUDGET || code == codes::BEM_MEMORY_BUDGET ||
         code == codes::BEM_CANCELLED;
}

/// The payload pass over several threads. Payloads are claimed in id order
/// under one lock, and what must happen in that order happens there: the
/// cancel poll, the warnings that need no decoding and
/// Package::prepare_payload, which spends the decode budget. Decoding and
/// the content checks then run unlocked, each thread into its own buffer and
/// its own per-payload report; the reports are merged in id order at the
/// end. So the report is the one pass's whatever the thread count. A zstd
/// payload of a binary package is decoded in pieces with its checks run on
/// each piece (streamed_clean); only a payload with deformation frames, a
/// finding to locate, or another container is decoded whole, so peak memory
/// is at most one whole payload per thread and usually a piece.
class PayloadPass {
 public:
  /// Streamed payloads are decoded in pieces of this size: a multiple of
  /// StreamedChecks::kPieceUnit that stays in L2 with the decoder's window in L3.
  static constexpr std::size_t kPieceBytes = StreamedChecks::kPieceUnit * 4096;  // 384 KiB

  explicit PayloadPass(Context& ctx)
      : ctx_(ctx),
        table_(ctx.package.payloads()),
        n_(static_cast<std::uint32_t>(table_.size())),
        section_(ctx.package.kind() == ContainerKind::kZip ? "§14" : "§2"),
        // A manifest error can end the walk over part of the manifest (or
        // skip a reference whose size is wrong) before its payload
        // references are seen: "unreferenced" is only known when the
        // manifest walk had no error.
        references_known_(!ctx.report.has_errors()),
        mapped_range_(ctx.options.input_hints && ctx.package.kind() == ContainerKind::kBinary),
        reports_(n_, core::Report(ctx.report.max_issues())),
        done_(n_, 0) {}

  void run() {
    const ValidateOptions& o = ctx_.options;
    core::Executor& ex = o.executor != nullptr ? *o.executor
                         : o.threads == 1      ? core::serial_executor()
                                               : core::default_executor();
    const std::size_t threads = o.threads == 0 ? ex.concurrency() : o.threads;
    const std::size_t pieces = std::min<std::size_t>(threads, std::max<std::uint32_t>(n_, 1));
    const std::thread::id caller = std::this_thread::get_id();
    if (o.progress) o.progress(0, n_);
    // Each piece claims payloads until none is left; the executor rethrows
    // the first exception once every piece has returned.
    ex.parallel_for(0, pieces, 1, [&](std::size_t b, std::size_t e) {
      for (std::size_t piece = b; piece < e; ++piece) work(std::this_thread::get_id() == caller);
    });
    for (std::uint32_t id = 0; id < n_; ++id)
      if (done_[id]) ctx_.report.merge(reports_[id]);
    if (o.progress) o.progress(n_, n_);
  }

 private:
  void work(bool calling_thread) {
    // Grows to the largest payload this piece decodes whole; held against
    // the memory budget, waiting for other pieces' buffers when it is short.
    PayloadBuffer scratch(ctx_.package.decode_control(), DecodeControl::Hold::kReusable);
    std::vector<std::uint8_t> piece;  // the pieces of streamed payloads
    try {
      for (;;) {
        std::uint32_t id = 0;
        bool decode = false;
        {
          std::lock_guard lock(mutex_);
          if (stop_ || next_ >= n_) return;
          id = next_++;
          decode = begin(id, reports_[id]);
        }
        if (decode) finish(id, reports_[id], scratch, piece);
        std::uint32_t checked = 0;
        {
          std::lock_guard lock(mutex_);
          done_[id] = 1;
          while (checked_ < n_ && done_[checked_]) ++checked_;
          checked = checked_;
        }
        // Progress is reported on the calling thread only (ValidateOptions).
        if (calling_thread && ctx_.options.progress && checked < n_)
          ctx_.options.progress(checked, n_);
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      stop_ = true;  // the other pieces stop claiming; the executor rethrows
      throw;
    }
  }

  void report_decode_error(core::Report& out, const PayloadInfo& info, core::Error err) {
    core::Location loc = err.location;
    if (!loc.offset) loc.offset = info.offset;
    if (loc.member.empty()) loc.member = info.member;
    out.add({err.code, core::Severity::kError, section_, loc, err.message});
  }

  /// In id order, under the lock: what comes before decoding. False when
  /// the payload is not decoded (absent, or refused).
  bool begin(std::uint32_t id, core::Report& out) {
    const PayloadInfo& info = table_[id];
    if (!info.present) return false;  // a missing ZIP payload is reported where it is referenced
    if (const DecodeControl* control = ctx_.package.decode_control())
      if (auto p = control->poll(); !p) {
        out.add({p.error().code, core::Severity::kError, section_, payload_location(info),
                 "payload " + std::to_string(id) + ": " + p.error().message});
        stop_ = true;
        return false;
      }
    auto uses = ctx_.payload_uses.find(id);
    bool referenced = uses != ctx_.payload_uses.end() && !uses->second.empty();
    // Q5: unreferenced payloads and zstd without gain are writer duties: reported, not errors.
    if (!referenced && references_known_)
      out.warning(codes::BEM_PAYLOAD_UNREFERENCED, "§2", payload_location(info),
                  "payload " + std::to_string(id) + " is not referenced by the manifest");
    if (info.codec == Codec::kZstd && info.stored_size >= info.decoded_size)
      out.info(codes::BEM_PAYLOAD_ZSTD_NO_GAIN, "§2", payload_location(info),
               "payload " + std::to_string(id) + " is zstd-compressed to " +
                   std::to_string(info.stored_size) + " bytes from " +
                   std::to_string(info.decoded_size) + "; writers store it raw");
    if (auto st = ctx_.package.prepare_payload(id); !st) {
      core::Error err = std::move(st).error();
      // Past the budget, or cancelled: the remaining payloads are not decoded.
      if (stops_the_pass(err.code)) stop_ = true;
      report_decode_error(out, info, std::move(err));
      return false;
    }
    return true;
  }

  /// Unlocked: a zstd payload of a binary package whose checks run piece by
  /// piece is decoded in pieces of kPieceBytes that stay in cache; true when
  /// that decode succeeded and the checks found nothing. Otherwise (and for
  /// every other payload) finish() decodes it whole, which reports exactly
  /// what one pass reported before pieces existed.
  bool streamed_clean(std::uint32_t id, const PayloadInfo& info, std::vector<std::uint8_t>& piece) {
    if (ctx_.package.kind() != ContainerKind::kBinary || info.codec != Codec::kZstd) return false;
    static const std::vector<PayloadUse> kNoUses;
    auto uses = ctx_.payload_uses.find(id);
    StreamedChecks checks(uses == ctx_.payload_uses.end() ? kNoUses : uses->second,
                          info.decoded_size);
    if (!checks.possible()) return false;
    if (piece.empty()) piece.resize(kPieceBytes);
    const Bytes stored = ctx_.package.file().subspan(info.offset, info.stored_size);
    auto st = stream_zstd_payload(stored, info.decoded_size, piece,
                                  [&checks](Bytes p) { checks.feed(p); });
    return st && checks.clean();
  }

  /// Unlocked: decode once (integrity: zstd frame rules, ZIP CRC) and run
  /// the queued checks; the bytes are dropped before this thread decodes
  /// its next payload.
  void finish(std::uint32_t id, core::Report& out, PayloadBuffer& scratch,
              std::vector<std::uint8_t>& piece) {
    const PayloadInfo& info = table_[id];
    const Bytes stored_range =
        mapped_range_ ? ctx_.package.file().subspan(info.offset, info.stored_size) : Bytes{};
    if (mapped_range_) ctx_.options.input_hints->will_read(stored_range);
    if (streamed_clean(id, info, piece)) {
      if (mapped_range_) ctx_.options.input_hints->done_reading(stored_range);
      return;
    }
    auto read = ctx_.package.decode_prepared(id, scratch);
    if (!read) {
      core::Error err = std::move(read).error();
      if (stops_the_pass(err.code)) {  // a ZIP entry polls the cancel flag as it is read
        std::lock_guard lock(mutex_);
        stop_ = true;
      }
      report_decode_error(out, info, std::move(err));
      return;
    }
    Bytes bytes = *read;
    auto uses = ctx_.payload_uses.find(id);
    if (uses != ctx_.payload_uses.end() && !uses->second.empty() &&
        bytes.size() == info.decoded_size) {
      Context local(ctx_.manifest, ctx_.package, out, ctx_.options, ctx_.minor(),
                    ctx_.minor_known());
      check_uses(local, id, bytes, uses->second);
    }
    // The stored bytes are not read again: a memory-mapped caller may drop them.
    if (mapped_range_) ctx_.options.input_hints->done_reading(stored_range);
  }

  Context& ctx_;
  const std::vector<PayloadInfo>& table_;
  const std::uint32_t n_;
  const char* const section_;
  const bool references_known_;
  const bool mapped_range_;
  std::vector<core::Report> reports_;  ///< per payload, merged in id order
  std::mutex mutex_;
  std::vector<char> done_;     ///< guarded by mutex_
  std::uint32_t next_ = 0;     ///< the next payload to claim; guarded by mutex_
  std::uint32_t checked_ = 0;  ///< payloads 0..checked_-1 are done; guarded by mutex_
  bool stop_ = false;          ///< guarded by mutex_
};

}  // namespace

void check_payload_data(Context& ctx) {
  PayloadPass(ctx).run();
}

}  // namespace charkit::bem
