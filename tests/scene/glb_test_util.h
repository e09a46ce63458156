// Test helper: splits a GLB file into its JSON and BIN chunks by reading the
// bytes as glTF 2.0 §4.4 lays them out (12-byte header, then chunks of
// length + type + data), checking every rule on the way.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace charkit::testkit {

struct GlbChunks {
  nlohmann::json json;
  std::string json_text;  ///< chunk data including its padding
  std::vector<std::uint8_t> bin;
  bool has_bin = false;
};

inline std::uint32_t glb_u32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t{b[at]} | (std::uint32_t{b[at + 1]} << 8) | (std::uint32_t{b[at + 2]} << 16) |
         (std::uint32_t{b[at + 3]} << 24);
}

/// Fails the current test (non-fatally) on any layout error; returns what it read.
inline GlbChunks split_glb(const std::vector<std::uint8_t>& glb) {
  GlbChunks out;
  EXPECT_GE(glb.size(), 20u);
  if (glb.size() < 20) {
    return out;
  }
  EXPECT_EQ(glb_u32(glb, 0), 0x46546C67u) << "magic glTF";
  EXPECT_EQ(glb_u32(glb, 4), 2u) << "version";
  EXPECT_EQ(glb_u32(glb, 8), glb.size()) << "header length = file length";
  EXPECT_EQ(glb.size() % 4, 0u);
  const std::uint32_t json_len = glb_u32(glb, 12);
  EXPECT_EQ(glb_u32(glb, 16), 0x4E4F534Au) << "first chunk is JSON";
  EXPECT_EQ(json_len % 4, 0u) << "JSON chunk padded to 4";
  EXPECT_LE(20u + json_len, glb.size());
  if (20u + json_len > glb.size()) {
    return out;
  }
  out.json_text.assign(glb.begin() + 20, glb.begin() + 20 + json_len);
  // Padding after the closing brace is spaces only.
  const std::size_t close = out.json_text.find_last_of('}');
  EXPECT_NE(close, std::string::npos);
  for (std::size_t i = close + 1; i < out.json_text.size(); ++i) {
    EXPECT_EQ(out.json_text[i], ' ') << "JSON padding byte " << i;
  }
  out.json = nlohmann::json::parse(out.json_text);
  const std::size_t bin_at = 20u + json_len;
  if (bin_at < glb.size()) {
    EXPECT_LE(bin_at + 8, glb.size());
    const std::uint32_t bin_len = glb_u32(glb, bin_at);
    EXPECT_EQ(glb_u32(glb, bin_at + 4), 0x004E4942u) << "second chunk is BIN";
    EXPECT_EQ(bin_len % 4, 0u) << "BIN chunk padded to 4";
    EXPECT_EQ(bin_at + 8 + bin_len, glb.size()) << "BIN chunk ends the file";
    out.bin.assign(glb.begin() + static_cast<std::ptrdiff_t>(bin_at + 8), glb.end());
    out.has_bin = true;
  }
  return out;
}

/// Bytes of an accessor's data (tightly packed, as our writer stores it).
inline std::vector<std::uint8_t> accessor_bytes(const GlbChunks& glb, std::size_t accessor,
                                                std::size_t element_size) {
  const auto& acc = glb.json["accessors"][accessor];
  const auto& view = glb.json["bufferViews"][acc["bufferView"].get<std::size_t>()];
  const std::size_t offset =
      view["byteOffset"].get<std::size_t>() + acc.value("byteOffset", std::size_t{0});
  const std::size_t size = acc["count"].get<std::size_t>() * element_size;
  EXPECT_LE(offset + size, glb.bin.size());
  if (offset + size > glb.bin.size()) {
    return {};
  }
  return {glb.bin.begin() + static_cast<std::ptrdiff_t>(offset),
          glb.bin.begin() + static_cast<std::ptrdiff_t>(offset + size)};
}

}  // namespace charkit::testkit
