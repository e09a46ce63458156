// libFuzzer target: the bounded XML reader of S3 answers (s3_xml.h) and the
// lookups the S3 backend does on what it returns.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "charkit/store/detail/s3_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  charkit::store::xml::Limits limits;
  limits.max_bytes = 1u << 20;
  auto doc = charkit::store::xml::parse(text, limits);
  if (!doc) {
    (void)doc.error().to_string();
    return 0;
  }
  for (const auto* u : doc->all("Upload")) {
    (void)u->child_text("Key");
    (void)u->child_text("UploadId");
    (void)u->child_text("Initiated");
  }
  for (const auto* c : doc->all("Contents")) (void)c->child_text("Key");
  (void)doc->child_text("Code");
  (void)charkit::store::xml::escape(doc->child_text("Message"));
  return 0;
}
