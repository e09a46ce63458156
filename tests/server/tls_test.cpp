// Native TLS (`charkit serve --tls-cert --tls-key`): HTTPS requests and a
// WSS upgrade against a server with a certificate made in the test; plain
// HTTP to the TLS port gets no answer; a bad key file stops start().
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "charkit/core/json.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

/// A self-signed certificate for 127.0.0.1 / localhost, valid one day.
bool write_self_signed(const fs::path& cert, const fs::path& key) {
  EVP_PKEY* pkey = EVP_EC_gen("P-256");
  if (!pkey) return false;
  X509* x = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
  X509_set_pubkey(x, pkey);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  bool ok = X509_sign(x, pkey, EVP_sha256()) > 0;
  FILE* c = std::fopen(cert.c_str(), "wb");
  FILE* k = std::fopen(key.c_str(), "wb");
  ok = ok && c && k && PEM_write_X509(c, x) == 1 &&
       PEM_write_PrivateKey(k, pkey, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (c) std::fclose(c);
  if (k) std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(pkey);
  return ok;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_tls_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(write_self_signed(dir_ / "cert.pem", dir_ / "key.pem"));
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::unique_ptr<Server> server_;
};

TEST_F(TlsTest, HttpsAndWssWork) {
  auto o = test_server_options(dir_ / "data");
  o.tls_cert = dir_ / "cert.pem";
  o.tls_key = dir_ / "key.pem";
  auto t = start_test_server(o);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  server_ = std::move(t->server);
  const std::uint16_t port = t->port;

  net::io_context ioc;
  ssl::context ctx(ssl::context::tls_client);
  ctx.set_verify_mode(ssl::verify_none);  // self-signed, made above
  {
    beast::ssl_stream<beast::tcp_stream> s(ioc, ctx);
    beast::get_lowest_layer(s).connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    s.handshake(ssl::stream_base::client);
    for (int i = 0; i < 2; ++i) {  // keep-alive over TLS
      http::request<http::empty_body> req{http::verb::get, "/healthz", 11};
      req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
      http::write(s, req);
      beast::flat_buffer buf;
      http::response<http::string_body> res;
      http::read(s, buf, res);
      EXPECT_EQ(res.result_int(), 200u);
      EXPECT_EQ(core::Json::parse(res.body())["status"], "ok");
    }
    // The login cookie is Secure under TLS.
    http::request<http::string_body> login{http::verb::delete_, "/api/session", 11};
    login.set(http::field::host, "127.0.0.1:" + std::to_string(port));
    http::write(s, login);
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(s, buf, res);
    EXPECT_NE(std::string(res[http::field::set_cookie]).find("; Secure"), std::string::npos);
  }
  {
    websocket::stream<beast::ssl_stream<beast::tcp_stream>> ws(ioc, ctx);
    beast::get_lowest_layer(ws).connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    ws.next_layer().handshake(ssl::stream_base::client);
    ws.handshake("127.0.0.1:" + std::to_string(port), "/api/live/cam?role=view");
    beast::flat_buffer buf;
    ws.read(buf);
    auto header = core::Json::parse(beast::buffers_to_string(buf.data()));
    EXPECT_EQ(header["type"], "header");
    EXPECT_EQ(header["mode"], "live");
    ws.close(websocket::close_code::normal);
  }
  // Plain HTTP on the TLS port is not answered as HTTP.
  auto plain = test_http::raw_request(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(plain.status, 0u);
}

TEST_F(TlsTest, BadKeyStopsStart) {
  auto o = test_server_options(dir_ / "data");
  o.tls_cert = dir_ / "cert.pem";
  o.tls_key = dir_ / "missing.pem";
  auto s = Server::create(o);
  ASSERT_TRUE(s);
  auto p = (*s)->start();
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, "SERVER_TLS");
}

}  // namespace
}  // namespace charkit::server
