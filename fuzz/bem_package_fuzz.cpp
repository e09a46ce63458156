// libFuzzer target: the whole BEM validator over arbitrary bytes (binary,
// ZIP or collection bundle). Must never crash, leak, hang or over-allocate.
#include <cstddef>
#include <cstdint>

#include "charkit/bem/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  charkit::core::Bytes bytes(data, size);
  charkit::bem::ValidateOptions options;
  options.max_issues = 64;
  // The last byte picks the "disable model validation" switch, so both
  // rule sets are explored.
  options.skip_validation = size > 0 && (data[size - 1] & 1) != 0;
  auto result = charkit::bem::validate_package(bytes, options);
  // Rendering must cope with whatever the messages quote from the input.
  (void)result.report.to_text("fuzz");
  (void)result.report.to_json_issues();
  for (const auto& m : result.summary.members) (void)m.report.to_json_issues();
  (void)result.valid();
  return 0;
}
