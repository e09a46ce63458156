#include "glb_builder.h"

namespace charkit::testkit {

namespace {

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

std::string base64(std::span<const std::uint8_t> in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{in[i]} << 16) |
                            (i + 1 < in.size() ? std::uint32_t{in[i + 1]} << 8 : 0) |
                            (i + 2 < in.size() ? std::uint32_t{in[i + 2]} : 0);
    out += k[(n >> 18) & 63];
    out += k[(n >> 12) & 63];
    out += i + 1 < in.size() ? k[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? k[n & 63] : '=';
  }
  return out;
}

std::string gltf_data_uri(std::span<const std::uint8_t> bytes) {
  return "data:application/octet-stream;base64," + base64(bytes);
}

std::vector<std::uint8_t> build_glb(std::string_view json_text, std::span<const std::uint8_t> bin) {
  std::string text(json_text);
  while (text.size() % 4 != 0) text += ' ';
  std::vector<std::uint8_t> data(bin.begin(), bin.end());
  while (data.size() % 4 != 0) data.push_back(0);
  std::vector<std::uint8_t> out;
  put_u32(out, 0x46546C67u);  // "glTF"
  put_u32(out, 2);
  put_u32(out, static_cast<std::uint32_t>(12 + 8 + text.size() + 8 + data.size()));
  put_u32(out, static_cast<std::uint32_t>(text.size()));
  put_u32(out, 0x4E4F534Au);  // "JSON"
  out.insert(out.end(), text.begin(), text.end());
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  put_u32(out, 0x004E4942u);  // "BIN\0"
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

}  // namespace charkit::testkit
