// One connection type for plain TCP and TLS (`charkit serve --tls-cert`).
// The HTTP and WebSocket sessions are written once against AnyStream, so
// Beast's HTTP and WebSocket machinery is generated once per operation
// instead of once for each kind of stream: the two were the slowest files to
// compile (docs/building.md). What differs — the TLS handshake, close_notify,
// the WebSocket teardown — is behind one virtual call per operation; a read
// or write costs one small allocation for its completion.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

namespace boost::asio::ssl {
class context;
}

namespace charkit::server {

/// A move-only completion handler of an operation, whatever its type was.
template <class... Args>
class Completion {
 public:
  Completion() = default;
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Completion>>>
  explicit Completion(F&& f)
      : impl_(std::make_unique<Model<std::decay_t<F>>>(std::forward<F>(f))) {}
  /// Calls the handler once; the handler is released first, as Asio does.
  void operator()(Args... args) {
    std::unique_ptr<Concept> p = std::move(impl_);
    p->call(std::move(args)...);
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual void call(Args... args) = 0;
  };
  template <class F>
  struct Model final : Concept {
    explicit Model(F&& x) : f(std::move(x)) {}
    explicit Model(const F& x) : f(x) {}
    void call(Args... args) override { std::move(f)(std::move(args)...); }
    F f;
  };
  std::unique_ptr<Concept> impl_;
};

/// Up to kMax buffers of a buffer sequence (a partial read or write is what
/// read_some and write_some may do anyway).
template <class Buffer>
struct BufferList {
  static constexpr std::size_t kMax = 64;
  std::array<Buffer, kMax> items{};
  std::size_t count = 0;
  template <class Sequence>
  explicit BufferList(const Sequence& s) {
    for (auto it = boost::asio::buffer_sequence_begin(s);
         it != boost::asio::buffer_sequence_end(s) && count < kMax; ++it)
      items[count++] = Buffer(*it);
  }
  const Buffer* begin() const { return items.data(); }
  const Buffer* end() const { return items.data() + count; }
};

class AnyStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  using ReadDone = Completion<boost::system::error_code, std::size_t>;
  using Done = Completion<boost::system::error_code>;

  /// Plain TCP.
  explicit AnyStream(boost::beast::tcp_stream&& tcp);
  /// TLS over `tcp` (the handshake comes with async_handshake).
  AnyStream(boost::beast::tcp_stream&& tcp, boost::asio::ssl::context& tls);
  AnyStream(AnyStream&&) noexcept;
  AnyStream& operator=(AnyStream&&) noexcept;
  ~AnyStream();

  executor_type get_executor() noexcept;
  /// The TCP connection under everything (timeouts, socket options, close):
  /// beast::get_lowest_layer() finds it.
  boost::beast::tcp_stream& next_layer() noexcept;
  bool tls() const noexcept;

  template <class MutableBufferSequence, class Handler>
  void async_read_some(const MutableBufferSequence& buffers, Handler&& handler) {
    read_some(BufferList<boost::asio::mutable_buffer>(buffers),
              ReadDone(std::forward<Handler>(handler)));
  }
  template <class ConstBufferSequence, class Handler>
  void async_write_some(const ConstBufferSequence& buffers, Handler&& handler) {
    write_some(BufferList<boost::asio::const_buffer>(buffers),
               ReadDone(std::forward<Handler>(handler)));
  }
  /// TLS: the server side of the handshake. Plain: completes at once.
  void async_handshake(Done done);
  /// TLS: close_notify. Plain: completes at once.
  void async_shutdown(Done done);
  /// The WebSocket closing handshake's end of the connection (Beast finds it
  /// by argument-dependent lookup): TLS shutdown then TCP, or TCP alone.
  void teardown(boost::beast::role_type role, Done done);

  struct Impl;

 private:
  void read_some(const BufferList<boost::asio::mutable_buffer>& buffers, ReadDone done);
  void write_some(const BufferList<boost::asio::const_buffer>& buffers, ReadDone done);
  std::unique_ptr<Impl> impl_;
};

template <class Handler>
void async_teardown(boost::beast::role_type role, AnyStream& stream, Handler&& handler) {
  stream.teardown(role, AnyStream::Done(std::forward<Handler>(handler)));
}
/// The blocking form Beast also looks up (charkit uses only the asynchronous one).
void teardown(boost::beast::role_type role, AnyStream& stream, boost::system::error_code& ec);

}  // namespace charkit::server
