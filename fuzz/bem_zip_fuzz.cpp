// libFuzzer target: the ZIP container (§14). Every input is made a ZIP by
// its first bytes ("PK\3\4" is prepended when missing), so mutations are
// spent on the archive structure, not on finding the magic.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::uint8_t kLocal[4] = {0x50, 0x4B, 0x03, 0x04};
  std::vector<std::uint8_t> buf;
  if (size < 4 || std::memcmp(data, kLocal, 4) != 0) buf.assign(kLocal, kLocal + 4);
  buf.insert(buf.end(), data, data + size);
  charkit::core::Bytes bytes(buf);

  // The container on its own: open, then read every payload and member.
  charkit::core::Report report(64);
  if (auto pkg = charkit::bem::open_zip(bytes, report)) {
    (void)pkg->manifest_text();
    for (std::uint32_t i = 0; i < pkg->payload_count() && i < 64; ++i) (void)pkg->read_payload(i);
    for (std::size_t i = 0; i < pkg->members().size() && i < 16; ++i) (void)pkg->read_member(i);
  }
  (void)report.to_json_issues();

  // And the whole validator on the same bytes.
  charkit::bem::ValidateOptions options;
  options.max_issues = 64;
  auto result = charkit::bem::validate_package(bytes, options);
  (void)result.report.to_json_issues();

  // Under a memory budget small enough to refuse buffers and manifests, on
  // two threads that wait for each other's buffers.
  options.max_memory_bytes = 64 * 1024;
  options.threads = 2;
  auto bounded = charkit::bem::validate_package(bytes, options);
  if (bounded.summary.peak_memory_bytes > options.max_memory_bytes) __builtin_trap();
  (void)bounded.report.to_json_issues();
  return 0;
}
