// Bounds-checked little-endian reading and writing over byte spans.
// A ByteReader never reads past its span: every read reports failure instead.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace charkit::core {

using Bytes = std::span<const std::uint8_t>;

inline std::string_view as_chars(Bytes b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}
inline Bytes as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/// Load a little-endian unsigned integer from p (caller guarantees sizeof(T) bytes).
template <typename T>
inline T load_le(const std::uint8_t* p) {
  static_assert(std::is_unsigned_v<T>);
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(p[i]) << (8 * i));
  return v;
}

/// Store an unsigned integer at p, little-endian (caller guarantees sizeof(T) bytes).
template <typename T>
inline void store_le(std::uint8_t* p, T v) {
  static_assert(std::is_unsigned_v<T>);
  for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

/// Append an unsigned integer to out, little-endian.
template <typename T>
inline void append_le(std::vector<std::uint8_t>& out, T v) {
  static_assert(std::is_unsigned_v<T>);
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

inline float load_f32_le(const std::uint8_t* p) {
  return std::bit_cast<float>(load_le<std::uint32_t>(p));
}

/// Sequential reader over a span. Reads that would cross the end fail and
/// leave the position unchanged.
class ByteReader {
 public:
  explicit ByteReader(Bytes data, std::uint64_t base_offset = 0)
      : data_(data), base_(base_offset) {}

  std::size_t position() const { return pos_; }
  /// Absolute offset of the current position (base + position), for error locations.
  std::uint64_t offset() const { return base_ + pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  template <typename T>
  [[nodiscard]] bool read(T& out) {
    static_assert(std::is_unsigned_v<T>);
    if (remaining() < sizeof(T)) return false;
    out = load_le<T>(data_.data() + pos_);
    pos_ += sizeof(T);
    return true;
  }
  [[nodiscard]] bool read_f32(float& out) {
    std::uint32_t u = 0;
    if (!read(u)) return false;
    out = std::bit_cast<float>(u);
    return true;
  }
  [[nodiscard]] bool read_bytes(std::size_t n, Bytes& out) {
    if (remaining() < n) return false;
    out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  [[nodiscard]] bool skip(std::size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }
  [[nodiscard]] bool seek(std::size_t pos) {
    if (pos > data_.size()) return false;
    pos_ = pos;
    return true;
  }

 private:
  Bytes data_;
  std::size_t pos_ = 0;
  std::uint64_t base_ = 0;
};

/// Appending little-endian writer into a growable buffer.
class ByteWriter {
 public:
  template <typename T>
  void write(T v) {
    static_assert(std::is_unsigned_v<T>);
    for (std::size_t i = 0; i < sizeof(T); ++i)
      buf_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void write_f32(float f) { write(std::bit_cast<std::uint32_t>(f)); }
  void write_bytes(Bytes b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
  void write_string(std::string_view s) { write_bytes(as_bytes(s)); }
  void pad_to(std::size_t alignment, std::uint8_t fill = 0) {
    while (buf_.size() % alignment != 0) buf_.push_back(fill);
  }
  /// Overwrite an already written little-endian value at pos (for back-patching sizes).
  template <typename T>
  void patch(std::size_t pos, T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i)
      buf_.at(pos + i) = static_cast<std::uint8_t>(v >> (8 * i));
  }
  std::size_t size() const { return buf_.size(); }
  const std::vector<std::uint8_t>& bytes() const& { return buf_; }
  std::vector<std::uint8_t> take() && { return std::move(buf_); }

 private:
  std::vector<std::uint8_t> buf_;
};

}  // namespace charkit::core
