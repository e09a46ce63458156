// libFuzzer target: the `.nmn` sidecar reader (NAME.bmd_ue.json, strict JSON
// with its schema), then the writer and a read of what was written (must
// succeed and be equal), and the check against a small network.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "charkit/deformer/nmn.h"
#include "charkit/deformer/nmn_sidecar.h"

using namespace charkit::deformer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  auto s = read_nmn_sidecar(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!s) {
    (void)s.error().to_string();
    return 0;
  }
  auto again = read_nmn_sidecar(write_nmn_sidecar(*s));
  if (!again || !(*again == *s)) __builtin_trap();  // what we read we write and read back
  NmnNetwork n;
  n.num_bones = 1;
  (void)check_nmn_sidecar(*s, n);
  (void)nmn_sidecar_group_items(*s);
  return 0;
}
