// zstd payload rules (§2): one standalone frame spanning the whole stored
// range, no dictionary, exact content size.
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader, ZSTD_isFrame
#include <zstd.h>

#include "charkit/bem/container.h"

namespace charkit::bem {

core::Status decode_zstd_payload(Bytes stored, std::uint64_t decoded_size,
                                 std::vector<std::uint8_t>& out) {
  using core::Location;
  using core::make_error;
  if (stored.size() < 4 || ZSTD_isFrame(stored.data(), stored.size()) == 0)
    return make_error("BEM_ZSTD_FRAME", "zstd payload does not start with a zstd frame",
                      Location::at_offset(0));
  // Skippable frames are not "one standalone frame" (docs/bem.md).
  unsigned magic = static_cast<unsigned>(stored[0]) | static_cast<unsigned>(stored[1]) << 8 |
                   static_cast<unsigned>(stored[2]) << 16 | static_cast<unsigned>(stored[3]) << 24;
  if ((magic & 0xFFFFFFF0u) == 0x184D2A50u)
    return make_error("BEM_ZSTD_FRAME", "zstd payload starts with a skippable frame",
                      Location::at_offset(0));
  ZSTD_frameHeader fh{};
  std::size_t hr = ZSTD_getFrameHeader(&fh, stored.data(), stored.size());
  if (ZSTD_isError(hr) || hr != 0)
    return make_error("BEM_ZSTD_FRAME", "zstd frame header is truncated or invalid",
                      Location::at_offset(0));
  if (fh.dictID != 0)
    return make_error("BEM_ZSTD_DICTIONARY",
                      "zstd frame names dictionary " + std::to_string(fh.dictID) +
                          "; BEM payloads use no dictionary",
                      Location::at_offset(0));
  if (fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN)
    return make_error("BEM_ZSTD_SIZE", "zstd frame does not declare its content size",
                      Location::at_offset(0));
  if (fh.frameContentSize != decoded_size)
    return make_error("BEM_ZSTD_SIZE",
                      "zstd frame declares " + std::to_string(fh.frameContentSize) +
                          " bytes but the directory says decoded_size " + std::to_string(decoded_size),
                      Location::at_offset(0));
  std::size_t frame = ZSTD_findFrameCompressedSize(stored.data(), stored.size());
  if (ZSTD_isError(frame))
    return make_error("BEM_ZSTD_DATA", std::string("zstd frame is corrupt: ") + ZSTD_getErrorName(frame),
                      Location::at_offset(0));
  if (frame != stored.size())
    return make_error("BEM_ZSTD_TRAILING",
                      "zstd frame ends after " + std::to_string(frame) + " of " +
                          std::to_string(stored.size()) + " stored bytes",
                      Location::at_offset(frame));
  // decoded_size was bounded (≤ 512 MiB) by the directory check before we allocate.
  out.resize(decoded_size);
  thread_local ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), stored.data(), stored.size());
  if (ZSTD_isError(n))
    return make_error("BEM_ZSTD_DATA", std::string("zstd data is corrupt: ") + ZSTD_getErrorName(n),
                      Location::at_offset(0));
  if (n != decoded_size)
    return make_error("BEM_ZSTD_SIZE",
                      "zstd frame decoded to " + std::to_string(n) + " bytes, expected " +
                          std::to_string(decoded_size),
                      Location::at_offset(0));
  return core::Ok{};
}

}  // namespace charkit::bem
