// libFuzzer target: WebSocket frame decoding as the server meets it. The
// input is (1) a 572-byte keypoint frame for ws::decode_frame, which must
// round-trip through encode_frame when accepted, and (2) whatever a client
// sends after a valid upgrade, read by a Beast WebSocket server stream with
// the server's message limit (4 KiB): masking, fragmentation, control
// frames, close codes, UTF-8 of text messages. No input may crash, throw
// or grow a message past the limit. (3) The frame-length guard the server
// puts in front of Beast (ws::FrameLengthGuard) scans the same bytes.
#include <boost/asio.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "charkit/server/detail/ws.h"

using namespace charkit::server;
namespace beast = boost::beast;
namespace net = boost::asio;
namespace websocket = beast::websocket;

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  // (1) the binary keypoint frame of live publishers.
  const std::string_view frame = in.substr(0, ws::kFrameBytes);
  auto v = ws::decode_frame(frame);
  if (v) check(ws::encode_frame(*v) == frame);

  // (3) the frame-length guard in front of it: the same bytes out whatever
  // the split (whole, byte by byte), and only a tripped guard changes any.
  {
    std::string whole(in), bytewise(in);
    ws::FrameLengthGuard a, b;
    a.feed(reinterpret_cast<unsigned char*>(whole.data()), whole.size());
    for (char& c : bytewise) b.feed(reinterpret_cast<unsigned char*>(&c), 1);
    check(whole == bytewise);
    check(a.tripped() == b.tripped());
    if (!a.tripped()) check(whole == in);
  }

  // (2) the WebSocket protocol after a handshake, server side.
  net::io_context ioc;
  beast::test::stream client(ioc);
  beast::test::stream server_end(ioc);
  client.connect(server_end);
  websocket::stream<beast::test::stream> server(std::move(server_end));
  server.read_message_max(ws::kMaxClientMessage);
  const std::string upgrade =
      "GET /api/live/cam?role=publish HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
      "Sec-WebSocket-Version: 13\r\n\r\n";
  beast::error_code ec;
  net::write(client, net::buffer(upgrade), ec);
  check(!ec);
  server.accept(ec);
  check(!ec);
  net::write(client, net::buffer(data, size), ec);
  client.close();
  for (int i = 0; i < 256; ++i) {
    beast::flat_buffer buf;
    server.read(buf, ec);
    if (ec) break;
    check(buf.size() <= ws::kMaxClientMessage);
    if (server.got_binary() && buf.size() == ws::kFrameBytes)
      (void)ws::decode_frame(beast::buffers_to_string(buf.data()));
  }
  return 0;
}
