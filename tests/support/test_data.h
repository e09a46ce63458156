// Where the test programs find tests/data, and a file read whole: shared, so
// that test files built as one unity translation unit do not each define them.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace charkit::testkit {

#ifdef CHARKIT_TEST_DATA
/// tests/data/models/: the public glTF, VRM and FBX models (licences beside them).
inline const std::string kModels = std::string(CHARKIT_TEST_DATA) + "/models/";
#endif

/// The bytes of the file at `path`; empty when it cannot be read.
inline std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace charkit::testkit
