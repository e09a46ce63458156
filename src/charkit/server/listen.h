// The --listen value of `charkit serve`: HOST:PORT where HOST is an IPv4
// literal, an IPv6 literal in brackets ([::1], [::]), a name (localhost, or
// any name the system resolver knows) or empty (loopback, 127.0.0.1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "charkit/core/result.h"

namespace charkit::server {

struct ListenAddress {
  std::string address;  ///< an IP literal for ServerOptions::address (no brackets)
  std::uint16_t port = 0;
};

/// "127.0.0.1:8080", "[::1]:0", "[::]:8080", "localhost:8080", ":8080".
/// "localhost" is 127.0.0.1 without asking the resolver (RFC 6761); other
/// names resolve to their first address. Errors: SERVER_ADDRESS (no port, a
/// port outside 0..65535, an unbracketed IPv6 address, a name that does not
/// resolve), with the expected form in the message.
core::Result<ListenAddress> parse_listen_address(std::string_view text);

}  // namespace charkit::server
