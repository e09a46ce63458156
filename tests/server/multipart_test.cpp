// The multipart/form-data reader on bodies written by hand here (RFC 2046
// §5.1 framing, RFC 7578 Content-Disposition), fed whole and split at every
// byte position, so boundaries, CRLFs and headers straddle chunk edges.
#include "charkit/server/detail/multipart.h"
#include "charkit/store/error_codes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace charkit::server {
namespace {

struct Outcome {
  bool ok = false;
  std::string code;  ///< the error's code when !ok
  std::string file_name;
  std::string data;
  int begins = 0;
};

/// Feeds `body` in pieces of the given sizes (cycled), then finishes.
Outcome run(const std::string& boundary, const std::string& body, std::vector<std::size_t> sizes) {
  Outcome out;
  MultipartReader::Events ev;
  ev.on_file_begin = [&](std::string_view name) -> core::Status {
    ++out.begins;
    out.file_name = std::string(name);
    return core::Ok{};
  };
  ev.on_file_data = [&](std::string_view bytes) -> core::Status {
    out.data.append(bytes);
    return core::Ok{};
  };
  MultipartReader r(boundary, ev);
  std::size_t pos = 0, k = 0;
  while (pos < body.size()) {
    std::size_t n = std::min(sizes[k++ % sizes.size()], body.size() - pos);
    auto s = r.feed(std::string_view(body).substr(pos, n));
    if (!s) {
      out.code = s.error().code;
      return out;
    }
    pos += n;
  }
  auto s = r.finish();
  if (!s) {
    out.code = s.error().code;
    return out;
  }
  out.ok = true;
  return out;
}

const std::string kB = "----charkitB0undary";

// A body as Firefox/Chromium send it: a text field, then the file part.
std::string form_body(const std::string& content) {
  return "--" + kB +
         "\r\n"
         "Content-Disposition: form-data; name=\"note\"\r\n"
         "\r\n"
         "hello\r\n"
         "--" +
         kB +
         "\r\n"
         "Content-Disposition: form-data; name=\"file\"; filename=\"walk.bvh\"\r\n"
         "Content-Type: application/octet-stream\r\n"
         "\r\n" +
         content + "\r\n--" + kB + "--\r\n";
}

TEST(Multipart, BoundaryFromContentType) {
  EXPECT_EQ(*multipart_boundary("multipart/form-data; boundary=abc"), "abc");
  EXPECT_EQ(*multipart_boundary("Multipart/Form-Data;boundary=\"a b:c\""), "a b:c");
  EXPECT_EQ(*multipart_boundary("multipart/form-data; charset=utf-8; boundary=x-1"), "x-1");
  EXPECT_EQ(multipart_boundary("text/plain; boundary=abc").error().code, "MULTIPART_NOT_FORM_DATA");
  EXPECT_EQ(multipart_boundary("multipart/form-data").error().code, "MULTIPART_BAD_BOUNDARY");
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=").error().code,
            "MULTIPART_BAD_BOUNDARY");
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=" + std::string(70, 'a')).ok(), true);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=" + std::string(71, 'a')).ok(),
            false);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"a\"b\"").ok(), false);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"ab \"").ok(), false);
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=\"unterminated").ok(), false);
  EXPECT_TRUE(is_multipart_form_data(" multipart/form-data ; boundary=x"));
  EXPECT_FALSE(is_multipart_form_data("application/octet-stream"));
}

TEST(Multipart, DispositionFileName) {
  EXPECT_EQ(**disposition_file_name("form-data; name=\"f\"; filename=\"a b.bvh\""), "a b.bvh");
  EXPECT_EQ(**disposition_file_name("form-data; filename=plain.bvh"), "plain.bvh");
  EXPECT_FALSE(disposition_file_name("form-data; name=\"note\"")->has_value());
  EXPECT_EQ(**disposition_file_name("form-data; filename=\"\""), "");
  // RFC 5987 wins over the plain parameter.
  EXPECT_EQ(**disposition_file_name(
                "form-data; filename=\"x.bvh\"; filename*=UTF-8''%E6%AD%A9%E3%81%8F.bvh"),
            "\xE6\xAD\xA9\xE3\x81\x8F.bvh");
  EXPECT_EQ(disposition_file_name("attachment; filename=\"a\"").error().code,
            "MULTIPART_BAD_DISPOSITION");
  EXPECT_EQ(disposition_file_name("form-data; filename=\"open").error().code,
            "MULTIPART_BAD_DISPOSITION");
  EXPECT_EQ(disposition_file_name("form-data; filename").error().code, "MULTIPART_BAD_DISPOSITION");
}

TEST(Multipart, WholeAndEverySplit) {
  // Content with CRLFs, a line that starts like the boundary and a lone
  // "--": only CRLF "--" + the exact boundary ends the part.
  const std::string content = "HIERARCHY\r\n--" + kB.substr(0, 10) + "\r\n\r\n--\r\nend\r\n";
  const std::string body = form_body(content);
  auto whole = run(kB, body, {body.size()});
  ASSERT_TRUE(whole.ok) << whole.code;
  EXPECT_EQ(whole.file_name, "walk.bvh");
  EXPECT_EQ(whole.data, content);
  EXPECT_EQ(whole.begins, 1);
  for (std::size_t split = 1; split < body.size(); ++split) {
    auto two = run(kB, body, {split, body.size()});
    ASSERT_TRUE(two.ok) << "split at " << split << ": " << two.code;
    ASSERT_EQ(two.data, content) << "split at " << split;
  }
  for (std::size_t step : {1u, 2u, 3u, 7u, 19u}) {
    auto small = run(kB, body, {step});
    ASSERT_TRUE(small.ok) << "step " << step << ": " << small.code;
    ASSERT_EQ(small.data, content) << "step " << step;
  }
}

TEST(Multipart, PreambleEpiloguePaddingAndNoHeaders) {
  const std::string body =
      "preamble text\r\n--" + kB +
      "  \t\r\n"  // transport padding
      "\r\n"      // a part without headers: a field
      "x\r\n--" +
      kB + "\r\ncontent-disposition: form-data; filename=\"m.json\"\r\n\r\n{}\r\n--" + kB +
      "--   epilogue, ignored";
  auto r = run(kB, body, {5});
  ASSERT_TRUE(r.ok) << r.code;
  EXPECT_EQ(r.file_name, "m.json");
  EXPECT_EQ(r.data, "{}");
}

TEST(Multipart, EmptyFilePart) {
  const std::string body = "--" + kB +
                           "\r\nContent-Disposition: form-data; filename=\"e.bvh\"\r\n\r\n\r\n--" +
                           kB + "--\r\n";
  auto r = run(kB, body, {3});
  ASSERT_TRUE(r.ok) << r.code;
  EXPECT_EQ(r.data, "");
  EXPECT_EQ(r.begins, 1);
}

TEST(Multipart, MalformedBodies) {
  const std::string content = "data\r\n";
  std::string body = form_body(content);
  // Cut before the closing boundary (also in the middle of it).
  for (std::size_t cut : {body.size() - 4, body.size() - 10, body.size() - 30}) {
    auto r = run(kB, body.substr(0, cut), {11});
    EXPECT_EQ(r.code, "MULTIPART_TRUNCATED") << cut;
  }
  // No file part.
  EXPECT_EQ(
      run(kB,
          "--" + kB + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--" + kB + "--",
          {4})
          .code,
      "MULTIPART_NO_FILE");
  // Two file parts.
  const std::string file_part =
      "--" + kB + "\r\nContent-Disposition: form-data; filename=\"a.bvh\"\r\n\r\nx\r\n";
  EXPECT_EQ(run(kB, file_part + file_part + "--" + kB + "--", {9}).code, "MULTIPART_TWO_FILES");
  // Garbage after a boundary.
  EXPECT_EQ(run(kB, "--" + kB + "xx\r\n\r\n", {4}).code, "MULTIPART_BAD_DELIMITER");
  EXPECT_EQ(run(kB, "--" + kB + "-x", {4}).code, "MULTIPART_BAD_DELIMITER");
  // A header line without a colon, a folded line, a bad disposition.
  EXPECT_EQ(run(kB, "--" + kB + "\r\nNoColon\r\n\r\nx\r\n--" + kB + "--", {4}).code,
            "MULTIPART_BAD_HEADER");
  EXPECT_EQ(run(kB, "--" + kB + "\r\nA: b\r\n folded\r\n\r\nx\r\n--" + kB + "--", {4}).code,
            "MULTIPART_BAD_HEADER");
  EXPECT_EQ(
      run(kB, "--" + kB + "\r\nContent-Disposition: inline\r\n\r\nx\r\n--" + kB + "--", {4}).code,
      "MULTIPART_BAD_DISPOSITION");
  // An endless header block, an endless preamble, too many parts, big fields.
  EXPECT_EQ(run(kB, "--" + kB + "\r\nX: " + std::string(kMaxPartHeaderBytes, 'a'), {1000}).code,
            "MULTIPART_HEADER_TOO_LARGE");
  EXPECT_EQ(run(kB, std::string(kMaxPreambleBytes + 100, 'p'), {1000}).code,
            "MULTIPART_PREAMBLE_TOO_LARGE");
  std::string many;
  for (std::size_t i = 0; i <= kMaxParts; ++i) many += "--" + kB + "\r\n\r\nv\r\n";
  EXPECT_EQ(run(kB, many, {100}).code, "MULTIPART_TOO_MANY_PARTS");
  EXPECT_EQ(
      run(kB, "--" + kB + "\r\n\r\n" + std::string(kMaxFieldBytes + 1, 'f') + "\r\n--" + kB + "--",
          {4096})
          .code,
      "MULTIPART_FIELD_TOO_LARGE");
}

TEST(Multipart, CallbackErrorStopsTheReader) {
  MultipartReader::Events ev;
  int data_calls = 0;
  ev.on_file_begin = [](std::string_view) -> core::Status {
    return core::make_error(store::codes::STORE_KIND_EXTENSION, "no");
  };
  ev.on_file_data = [&](std::string_view) -> core::Status {
    ++data_calls;
    return core::Ok{};
  };
  MultipartReader r(kB, ev);
  auto s = r.feed(form_body("abc"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "STORE_KIND_EXTENSION");
  EXPECT_FALSE(r.feed("more"));
  EXPECT_FALSE(r.finish());
  EXPECT_EQ(data_calls, 0);
}

}  // namespace
}  // namespace charkit::server
