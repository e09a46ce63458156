// libFuzzer target: the server's multipart/form-data reader
// (charkit/server/detail/multipart.h) on arbitrary bodies. The first byte picks a
// chunk size; the body is read whole and again in chunks, and both readings
// must agree (same outcome, same file bytes) — the reader's state machine
// must not depend on where the network splits a body. The Content-Type
// parsing runs on the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "charkit/server/detail/multipart.h"

using namespace charkit;
using namespace charkit::server;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct Reading {
  bool ok = false;
  std::string code;
  std::string name;
  std::string data;
  int begins = 0;
};

Reading read_body(std::string_view body, std::size_t chunk) {
  Reading out;
  MultipartReader::Events ev;
  ev.on_file_begin = [&](std::string_view name) -> core::Status {
    ++out.begins;
    out.name = std::string(name);
    return core::Ok{};
  };
  ev.on_file_data = [&](std::string_view bytes) -> core::Status {
    check(!bytes.empty());
    out.data.append(bytes);
    return core::Ok{};
  };
  MultipartReader r("fz", ev);
  for (std::size_t pos = 0; pos < body.size(); pos += chunk) {
    auto s = r.feed(body.substr(pos, chunk));
    if (!s) {
      out.code = s.error().code;
      check(!r.feed("x"));  // a failed reader stays failed
      return out;
    }
  }
  auto s = r.finish();
  if (!s) {
    out.code = s.error().code;
    return out;
  }
  check(r.has_file());
  check(r.file_bytes() == out.data.size());
  out.ok = true;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 64;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);

  Reading whole = read_body(body, body.size() + 1);
  Reading split = read_body(body, chunk);
  check(whole.ok == split.ok);
  check(whole.code == split.code);
  check(whole.begins <= 1 && split.begins == whole.begins);
  check(whole.name == split.name);
  if (whole.ok) check(whole.data == split.data);

  if (auto b = multipart_boundary(body)) {
    check(!b->empty() && b->size() <= kMaxBoundaryBytes);
    check(b->back() != ' ');
  }
  (void)disposition_file_name(body);
  return 0;
}
