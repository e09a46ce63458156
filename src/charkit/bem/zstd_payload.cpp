// zstd payload rules (§2): one standalone frame spanning the whole stored
// range, no dictionary, exact content size.
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader, ZSTD_isFrame, ZSTD_decompressBound
#include <zstd.h>

#include <functional>
#include <memory>
#include <string>

#include "charkit/bem/container.h"
#include "charkit/bem/error_codes.h"

namespace charkit::bem {
namespace {

// Upper bound of the bytes a well-formed frame's blocks can produce: raw and
// RLE blocks state their size, a compressed block yields at most
// blockSizeMax. Returns 0 if the block headers do not parse.
std::uint64_t frame_output_bound(Bytes frame, std::size_t pos, std::uint64_t block_max) {
  std::uint64_t total = 0;
  while (pos + 3 <= frame.size()) {
    std::uint32_t bh = static_cast<std::uint32_t>(frame[pos]) |
                       static_cast<std::uint32_t>(frame[pos + 1]) << 8 |
                       static_cast<std::uint32_t>(frame[pos + 2]) << 16;
    pos += 3;
    std::uint32_t type = (bh >> 1) & 3u, size = bh >> 3;
    if (type == 0) {
      total += size;
      pos += size;
    } else if (type == 1) {
      total += size;
      pos += 1;
    } else if (type == 2) {
      total += block_max;
      pos += size;
    } else {
      return 0;
    }
    if (bh & 1u) return total;
  }
  return 0;
}

}  // namespace

// Every frame rule that can be checked without decoding (§2), so that a bad
// frame is rejected before any output buffer exists.
core::Status check_zstd_frame(Bytes stored, std::uint64_t decoded_size) {
  using core::Location;
  using core::make_error;
  if (stored.size() < 4 || ZSTD_isFrame(stored.data(), stored.size()) == 0)
    return core::error_at_offset(codes::BEM_ZSTD_FRAME,
                                 "zstd payload does not start with a zstd frame", 0);
  // Skippable frames are not "one standalone frame" (§2; docs/bem/zip.md Q22).
  unsigned magic = static_cast<unsigned>(stored[0]) | static_cast<unsigned>(stored[1]) << 8 |
                   static_cast<unsigned>(stored[2]) << 16 | static_cast<unsigned>(stored[3]) << 24;
  if ((magic & 0xFFFFFFF0u) == 0x184D2A50u)
    return core::error_at_offset(codes::BEM_ZSTD_FRAME,
                                 "zstd payload starts with a skippable frame", 0);
  ZSTD_frameHeader fh{};
  std::size_t hr = ZSTD_getFrameHeader(&fh, stored.data(), stored.size());
  if (ZSTD_isError(hr) || hr != 0)
    return core::error_at_offset(codes::BEM_ZSTD_FRAME, "zstd frame header is truncated or invalid",
                                 0);
  if (fh.dictID != 0)
    return make_error(codes::BEM_ZSTD_DICTIONARY,
                      "zstd frame names dictionary " + std::to_string(fh.dictID) +
                          "; BEM payloads use no dictionary",
                      Location::at_offset(0));
  if (fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN)
    return core::error_at_offset(codes::BEM_ZSTD_SIZE,
                                 "zstd frame does not declare its content size", 0);
  if (fh.frameContentSize != decoded_size)
    return core::error_at_offset(codes::BEM_ZSTD_SIZE,
                                 "zstd frame declares " + std::to_string(fh.frameContentSize) +
                                     " bytes but the directory says decoded_size " +
                                     std::to_string(decoded_size),
                                 0);
  std::size_t frame = ZSTD_findFrameCompressedSize(stored.data(), stored.size());
  if (ZSTD_isError(frame))
    return core::error_at_offset(
        codes::BEM_ZSTD_DATA, std::string("zstd frame is corrupt: ") + ZSTD_getErrorName(frame), 0);
  if (frame != stored.size())
    return core::error_at_offset(codes::BEM_ZSTD_TRAILING,
                                 "zstd frame ends after " + std::to_string(frame) + " of " +
                                     std::to_string(stored.size()) + " stored bytes",
                                 frame);
  if (decoded_size < 1 || decoded_size > kMaxPayloadSize)
    return core::error_at_offset(
        codes::BEM_ZSTD_SIZE,
        "decoded_size " + std::to_string(decoded_size) + " is outside 1..536870912", 0);
  // A frame whose blocks cannot produce decoded_size bytes is rejected before
  // the output buffer is allocated (a tiny corrupt frame may claim 512 MiB).
  std::uint64_t bound = frame_output_bound(stored, fh.headerSize, fh.blockSizeMax);
  if (bound < decoded_size)
    return core::error_at_offset(codes::BEM_ZSTD_DATA,
                                 "zstd frame blocks can produce at most " + std::to_string(bound) +
                                     " bytes, fewer than its declared content size " +
                                     std::to_string(decoded_size),
                                 0);
  return core::Ok{};
}

namespace {

/// This thread's decoder (null when it cannot be allocated), kept between payloads.
ZSTD_DCtx* thread_dctx() {
  struct DCtxFree {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  return dctx.get();
}

core::Status decompress_checked_frame(Bytes stored, std::span<std::uint8_t> out) {
  using core::Location;
  using core::make_error;
  const std::uint64_t decoded_size = out.size();
  ZSTD_DCtx* dctx = thread_dctx();
  if (dctx == nullptr)
    return core::error_at_offset(codes::BEM_ZSTD_DATA, "cannot allocate a zstd decoder", 0);
  // The frame's optional content checksum is verified by the decoder (docs/bem/zip.md).
  std::size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(n))
    return core::error_at_offset(codes::BEM_ZSTD_DATA,
                                 std::string("zstd data is corrupt: ") + ZSTD_getErrorName(n), 0);
  if (n != decoded_size)
    return core::error_at_offset(codes::BEM_ZSTD_SIZE,
                                 "zstd frame decoded to " + std::to_string(n) +
                                     " bytes, expected " + std::to_string(decoded_size),
                                 0);
  return core::Ok{};
}

}  // namespace

core::Status decode_zstd_payload(Bytes stored, std::span<std::uint8_t> out) {
  auto st = check_zstd_frame(stored, out.size());
  if (!st) return st;
  return decompress_checked_frame(stored, out);
}

core::Status stream_zstd_payload(Bytes stored, std::uint64_t decoded_size,
                                 std::span<std::uint8_t> piece,
                                 const std::function<void(Bytes)>& sink) {
  using core::Location;
  using core::make_error;
  ZSTD_DCtx* dctx = thread_dctx();
  if (dctx == nullptr || piece.empty())
    return core::error_at_offset(codes::BEM_ZSTD_DATA, "cannot allocate a zstd decoder", 0);
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  ZSTD_inBuffer in{stored.data(), stored.size(), 0};
  ZSTD_outBuffer out{piece.data(), piece.size(), 0};
  std::uint64_t total = 0;
  auto size_error = [&] {
    return core::error_at_offset(
        codes::BEM_ZSTD_SIZE,
        "zstd frame decoded to more than " + std::to_string(decoded_size) + " bytes", 0);
  };
  for (;;) {
    const std::size_t left = ZSTD_decompressStream(dctx, &out, &in);
    if (ZSTD_isError(left)) {
      ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
      return core::error_at_offset(codes::BEM_ZSTD_DATA,
                                   std::string("zstd data is corrupt: ") + ZSTD_getErrorName(left),
                                   in.pos);
    }
    // The decoder returns when the piece is full or it needs more input.
    const bool full = out.pos == out.size;
    if (full || (left == 0 && out.pos > 0)) {
      total += out.pos;
      if (total > decoded_size) return size_error();
      sink(Bytes(piece.data(), out.pos));
      out.pos = 0;
    }
    if (left == 0) break;  // the frame is decoded and every byte handed over
    if (!full && in.pos == in.size)
      return core::error_at_offset(codes::BEM_ZSTD_DATA, "zstd frame is truncated", stored.size());
  }
  if (total != decoded_size || in.pos != in.size)
    return core::error_at_offset(codes::BEM_ZSTD_SIZE,
                                 "zstd frame decoded to " + std::to_string(total) +
                                     " bytes, expected " + std::to_string(decoded_size),
                                 0);
  return core::Ok{};
}

core::Status decode_zstd_payload(Bytes stored, std::uint64_t decoded_size,
                                 std::vector<std::uint8_t>& out) {
  auto st = check_zstd_frame(stored, decoded_size);
  if (!st) return st;
  out.resize(decoded_size);
  return decompress_checked_frame(stored, out);
}

}  // namespace charkit::bem
