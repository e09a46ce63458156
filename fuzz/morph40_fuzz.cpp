// libFuzzer target: deform::Morph40Job on arbitrary records. Input: byte 0
// the vertex count (1..64), byte 1 how many targets (1..4), then records
// (40 bytes each) dealt to the targets in turn, weights from the record
// count. Whatever validate() accepts must run without fault, and the
// threaded run must give the scalar run's bytes; whatever it refuses names
// a record offset inside its target.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "charkit/deform/morph40.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint32_t vertex_count = 1u + data[0] % 64u;
  const std::size_t target_count = 1u + data[1] % 4u;
  const std::size_t records = (size - 2) / deform::kMorph40RecordBytes;
  std::vector<std::vector<std::uint8_t>> bytes(target_count);
  for (std::size_t r = 0; r < records; ++r) {
    const std::uint8_t* p = data + 2 + r * deform::kMorph40RecordBytes;
    bytes[r % target_count].insert(bytes[r % target_count].end(), p,
                                   p + deform::kMorph40RecordBytes);
  }
  std::vector<deform::Morph40Target> targets;
  for (std::size_t t = 0; t < target_count; ++t)
    targets.push_back({bytes[t], 0.25F * static_cast<float>(t + 1)});
  std::vector<std::uint8_t> a(std::size_t{vertex_count} * deform::kMorph40VertexBytes, 0);
  std::vector<std::uint8_t> b = a;
  deform::Morph40Job job{vertex_count, targets, a};
  auto ok = job.validate();
  if (!ok) {
    if (ok.error().location.offset && *ok.error().location.offset >= size) __builtin_trap();
    // The scalar run must refuse out-of-range vertices without writing past the array.
    (void)job.run();
    return 0;
  }
  if (!job.run()) __builtin_trap();
  deform::Morph40Job threaded{vertex_count, targets, b};
  if (!threaded.run({&core::serial_executor()})) __builtin_trap();
  if (a != b) __builtin_trap();
  return 0;
}
