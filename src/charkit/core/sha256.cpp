#include "charkit/core/sha256.h"

#include <cstdlib>

#include <openssl/evp.h>

namespace charkit::core {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  // Allocation failure of a few hundred bytes is not a recoverable input error.
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    std::abort();
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
}

void Sha256::update(Bytes data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

Sha256Digest Sha256::finish() {
  Sha256Digest d{};
  unsigned int n = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d.data(), &n);
  return d;
}

Sha256Digest sha256(Bytes data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

std::string to_hex(std::span<const std::uint8_t> digest) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(digest.size() * 2);
  for (std::uint8_t b : digest) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

}  // namespace charkit::core
