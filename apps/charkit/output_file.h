// Writing a command's output file whole or not at all: the bytes go to a
// temporary file in the same folder, which is renamed over the final name
// only when every byte is written, so a failed write never leaves a
// half-written file under that name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::app {

/// The lower-cased extension of a path's file name (".glb", ".bem"), "" when
/// it has none.
std::string lower_extension(const std::string& path);

/// Errors: IO_WRITE (with the path and the reason).
core::Status write_output_file(const std::string& path, const std::vector<std::uint8_t>& bytes);

}  // namespace charkit::app
