// libFuzzer target: HTTP/1.1 message framing as the server reads it — the
// request line and header (16 KiB limit), then either a small body
// (64 KiB) or an upload body streamed through a 64 KiB buffer, chunked or
// not, with chunk extensions and trailers. The read buffer is bounded by
// the header limit exactly as in Session, so trailers are bounded too, and a
// declared Content-Length over the small-body limit is refused before a
// string body reserves it (the fuzzer's first finding in this harness): no
// input may throw (Beast's std::length_error on a 64 KiB trailer field was
// the finding), crash, or hand on more body bytes than were sent.
#include <array>
#include <boost/asio.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
constexpr std::size_t kHeaderLimit = 16 * 1024;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    net::io_context ioc;
    beast::test::stream client(ioc);
    beast::test::stream server(ioc);
    client.connect(server);
    beast::error_code ec;
    net::write(client, net::buffer(data, size), ec);
    client.close();
    beast::flat_buffer buffer(kHeaderLimit);  // as Session: bounds header and trailers
    for (int message = 0; message < 8; ++message) {
      http::request_parser<http::empty_body> head;
      head.header_limit(kHeaderLimit);
      head.body_limit(std::numeric_limits<std::uint64_t>::max());
      http::read_header(server, buffer, head, ec);
      if (ec) return 0;
      const bool upload = head.get().method() == http::verb::post;
      if (!upload) {
        // As Session: a declared length over the limit is answered 413 before
        // a string body is made (its reader reserves the declared length).
        if (head.content_length() && *head.content_length() > 64 * 1024) return 0;
        http::request_parser<http::string_body> body(std::move(head));
        body.body_limit(64 * 1024);
        http::read(server, buffer, body, ec);
        if (ec) return 0;
        check(body.get().body().size() <= 64 * 1024);
        continue;
      }
      http::request_parser<http::buffer_body> body(std::move(head));
      body.body_limit(1 << 20);
      std::array<char, 64 * 1024> chunk{};
      std::uint64_t received = 0;
      while (!body.is_done()) {
        body.get().body().data = chunk.data();
        body.get().body().size = chunk.size();
        body.get().body().more = true;
        http::read_some(server, buffer, body, ec);
        if (ec == http::error::need_buffer) ec = {};
        if (ec) return 0;
        received += chunk.size() - body.get().body().size;
        check(received <= size);
      }
    }
  } catch (...) {
    std::abort();  // nothing may throw out of the server's read path
  }
  return 0;
}
