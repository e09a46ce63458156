// Convert a BVH motion to MediaPipe-33 keypoint NDJSON on stdout:
//   bvh_to_ndjson FILE.bvh > FILE.ndjson
#include <charkit/core/mapped_file.h>
#include <charkit/motion/convert.h>

#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: bvh_to_ndjson FILE.bvh\n";
    return 2;
  }
  auto file = charkit::core::MappedFile::open(argv[1]);
  if (!file) {
    std::cerr << argv[1] << ": error " << file.error().code << ": " << file.error().message << "\n";
    return 2;
  }
  const charkit::core::Bytes bytes = file->bytes();
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  charkit::motion::ConvertOptions options;  // Y up, the file's frame rate
  auto summary = charkit::motion::convert_bvh(text, options, [](std::string_view lines) {
    std::cout.write(lines.data(), static_cast<std::streamsize>(lines.size()));
    return static_cast<bool>(std::cout);
  });
  if (!summary) {
    std::cerr << argv[1] << ": " << summary.error().to_string() << "\n";
    return 1;
  }
  std::cerr << argv[1] << ": " << summary->frames << " frames at " << summary->fps << " fps\n";
  return 0;
}
