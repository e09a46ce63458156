// AnyStream (detail/any_stream.h): the plain and the TLS connection behind
// one type. This is the only file that instantiates Beast's TCP and TLS
// stream operations, once each, for the type-erased completions.
#include "charkit/server/detail/any_stream.h"

#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>

namespace charkit::server {

namespace net = boost::asio;
namespace beast = boost::beast;
using error_code = boost::system::error_code;

struct AnyStream::Impl {
  virtual ~Impl() = default;
  virtual executor_type executor() = 0;
  virtual beast::tcp_stream& tcp() = 0;
  virtual bool tls() const = 0;
  virtual void read_some(const BufferList<net::mutable_buffer>& b, ReadDone done) = 0;
  virtual void write_some(const BufferList<net::const_buffer>& b, ReadDone done) = 0;
  virtual void handshake(Done done) = 0;
  virtual void shutdown(Done done) = 0;
  virtual void teardown(beast::role_type role, Done done) = 0;
};

namespace {

struct PlainImpl final : AnyStream::Impl {
  explicit PlainImpl(beast::tcp_stream&& s) : stream(std::move(s)) {}
  AnyStream::executor_type executor() override { return stream.get_executor(); }
  beast::tcp_stream& tcp() override { return stream; }
  bool tls() const override { return false; }
  void read_some(const BufferList<net::mutable_buffer>& b, AnyStream::ReadDone done) override {
    stream.async_read_some(b, std::move(done));
  }
  void write_some(const BufferList<net::const_buffer>& b, AnyStream::ReadDone done) override {
    stream.async_write_some(b, std::move(done));
  }
  void handshake(AnyStream::Done done) override {
    net::post(stream.get_executor(), [d = std::move(done)]() mutable { d(error_code()); });
  }
  void shutdown(AnyStream::Done done) override { handshake(std::move(done)); }
  void teardown(beast::role_type role, AnyStream::Done done) override {
    using beast::websocket::async_teardown;  // or Beast's own, found by its argument
    async_teardown(role, stream, std::move(done));
  }
  beast::tcp_stream stream;
};

struct TlsImpl final : AnyStream::Impl {
  TlsImpl(beast::tcp_stream&& s, net::ssl::context& ctx) : stream(std::move(s), ctx) {}
  AnyStream::executor_type executor() override { return stream.get_executor(); }
  beast::tcp_stream& tcp() override { return stream.next_layer(); }
  bool tls() const override { return true; }
  void read_some(const BufferList<net::mutable_buffer>& b, AnyStream::ReadDone done) override {
    stream.async_read_some(b, std::move(done));
  }
  void write_some(const BufferList<net::const_buffer>& b, AnyStream::ReadDone done) override {
    stream.async_write_some(b, std::move(done));
  }
  void handshake(AnyStream::Done done) override {
    stream.async_handshake(net::ssl::stream_base::server, std::move(done));
  }
  void shutdown(AnyStream::Done done) override { stream.async_shutdown(std::move(done)); }
  void teardown(beast::role_type role, AnyStream::Done done) override {
    using beast::websocket::async_teardown;  // Beast's TLS one, found by its argument
    async_teardown(role, stream, std::move(done));
  }
  beast::ssl_stream<beast::tcp_stream> stream;
};

}  // namespace

AnyStream::AnyStream(beast::tcp_stream&& tcp)
    : impl_(std::make_unique<PlainImpl>(std::move(tcp))) {}
AnyStream::AnyStream(beast::tcp_stream&& tcp, net::ssl::context& tls)
    : impl_(std::make_unique<TlsImpl>(std::move(tcp), tls)) {}
AnyStream::AnyStream(AnyStream&&) noexcept = default;
AnyStream& AnyStream::operator=(AnyStream&&) noexcept = default;
AnyStream::~AnyStream() = default;

AnyStream::executor_type AnyStream::get_executor() noexcept {
  return impl_->executor();
}
beast::tcp_stream& AnyStream::next_layer() noexcept {
  return impl_->tcp();
}
bool AnyStream::tls() const noexcept {
  return impl_->tls();
}
void AnyStream::read_some(const BufferList<net::mutable_buffer>& buffers, ReadDone done) {
  impl_->read_some(buffers, std::move(done));
}
void AnyStream::write_some(const BufferList<net::const_buffer>& buffers, ReadDone done) {
  impl_->write_some(buffers, std::move(done));
}
void AnyStream::async_handshake(Done done) {
  impl_->handshake(std::move(done));
}
void AnyStream::async_shutdown(Done done) {
  impl_->shutdown(std::move(done));
}
void AnyStream::teardown(beast::role_type role, Done done) {
  impl_->teardown(role, std::move(done));
}

void teardown(beast::role_type, AnyStream& stream, error_code& ec) {
  stream.next_layer().socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  stream.next_layer().close();
}

}  // namespace charkit::server
