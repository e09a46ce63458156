// SHA-256 through OpenSSL's EVP interface.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "charkit/core/bytes.h"

namespace charkit::core {

using Sha256Digest = std::array<std::uint8_t, 32>;

/// Incremental hasher; feed any number of spans, then finish() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(Bytes data);
  Sha256Digest finish();

 private:
  void* ctx_;  // EVP_MD_CTX*
};

Sha256Digest sha256(Bytes data);
/// Lower-case hexadecimal.
std::string to_hex(std::span<const std::uint8_t> digest);

}  // namespace charkit::core
