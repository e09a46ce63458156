#include "output_file.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace charkit::app {

core::Status write_output_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return core::make_error("IO_WRITE", path + ": cannot write");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return core::make_error("IO_WRITE", path + ": " + ec.message());
  }
  return core::Ok{};
}

}  // namespace charkit::app
