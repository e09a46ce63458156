// libFuzzer target: core::base64_decode in both alphabets. Whatever decodes
// must encode back (padded and unpadded) to text that decodes to the same
// bytes, and base64_decoded_size must predict the size.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "charkit/core/base64.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto alphabet : {core::Base64Alphabet::kStandard, core::Base64Alphabet::kUrl}) {
    auto decoded = core::base64_decode(text, alphabet);
    if (!decoded) {
      if (decoded.error().code.empty() || !decoded.error().location.offset ||
          *decoded.error().location.offset > size)
        __builtin_trap();  // every refusal names its place
      continue;
    }
    if (core::base64_decoded_size(text) != decoded->size()) __builtin_trap();
    for (bool pad : {true, false}) {
      const std::string again = core::base64_encode(*decoded, alphabet, pad);
      auto round = core::base64_decode(again, alphabet);
      if (!round || *round != *decoded) __builtin_trap();
    }
  }
  return 0;
}
