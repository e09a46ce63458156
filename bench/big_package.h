// A large, valid, deterministic BEM 1.5 package for benchmarks: two skinned
// meshes (1 Mi and 512 Ki vertices, 12-byte skin, 32-bit indices) and six
// textures (RGBA32 2048² and BC7 4096² with mip chains), about 256 MiB of
// decoded payloads stored as zstd frames (level 3).
#pragma once

#include <cstdint>
#include <vector>

namespace charkit::bench {

struct BigPackage {
  std::vector<std::uint8_t> file;  ///< the .bem bytes
  std::uint64_t decoded_total = 0;
  std::uint64_t largest_decoded = 0;
  std::uint64_t second_largest_decoded = 0;  ///< the next payload in size (may equal the largest)
};

BigPackage make_big_package();

}  // namespace charkit::bench
