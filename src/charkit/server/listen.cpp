#include "charkit/server/listen.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>

#include "charkit/server/error_codes.h"

namespace charkit::server {
namespace {

core::Error bad(std::string_view text, const std::string& why) {
  return core::make_error(codes::SERVER_ADDRESS,
                          "--listen '" + std::string(text) + "': " + why +
                              " (expected HOST:PORT, [IPV6]:PORT or :PORT, e.g. "
                              "127.0.0.1:8080, localhost:8080, [::1]:8080, [::]:8080)");
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

core::Result<ListenAddress> parse_listen_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad(text, "no port");
  std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string_view::npos)
    return bad(text, "the port is not a number");
  unsigned long port = std::stoul(std::string(port_text));
  if (port > 65535) return bad(text, "the port is above 65535");

  ListenAddress out;
  out.port = static_cast<std::uint16_t>(port);
  if (!host.empty() && host.front() == '[') {
    if (host.back() != ']') return bad(text, "unclosed '['");
    if (host.size() < 3) return bad(text, "empty brackets");
    host = host.substr(1, host.size() - 2);
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(AF_INET6, host.c_str(), buf) != 1)
      return bad(text, "'" + host + "' is not an IPv6 address");
    out.address = host;
    return out;
  }
  if (host.find(':') != std::string::npos)
    return bad(text, "an IPv6 address goes in brackets, e.g. [::1]:8080");
  if (host.empty() || host == "localhost") {
    out.address = "127.0.0.1";
    return out;
  }
  if (is_ip_literal(host)) {
    out.address = host;
    return out;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr)
    return bad(text, "cannot resolve '" + host + "': " + gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(found, &freeaddrinfo);
  char buf[INET6_ADDRSTRLEN] = {};
  const void* addr = nullptr;
  if (found->ai_family == AF_INET)
    addr = &reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
  else if (found->ai_family == AF_INET6)
    addr = &reinterpret_cast<const sockaddr_in6*>(found->ai_addr)->sin6_addr;
  if (addr == nullptr || inet_ntop(found->ai_family, addr, buf, sizeof buf) == nullptr)
    return bad(text, "'" + host + "' has no IPv4 or IPv6 address");
  out.address = buf;
  return out;
}

}  // namespace charkit::server
