// parse_listen_address: the --listen forms of `charkit serve` (docs/cli.md).
#include "charkit/server/listen.h"

#include <gtest/gtest.h>

namespace charkit::server {
namespace {

void expect_address(std::string_view text, const std::string& address, std::uint16_t port) {
  auto r = parse_listen_address(text);
  ASSERT_TRUE(r.ok()) << text << ": " << r.error().to_string();
  EXPECT_EQ(r->address, address) << text;
  EXPECT_EQ(r->port, port) << text;
}

TEST(ListenAddress, LiteralsNamesAndDefaults) {
  expect_address("127.0.0.1:8080", "127.0.0.1", 8080);
  expect_address("0.0.0.0:0", "0.0.0.0", 0);
  expect_address("[::1]:8080", "::1", 8080);
  expect_address("[::]:65535", "::", 65535);
  expect_address("[fe80::1]:1", "fe80::1", 1);
  expect_address("localhost:0", "127.0.0.1", 0);
  expect_address(":9000", "127.0.0.1", 9000);
}

TEST(ListenAddress, BadValuesSayWhatIsExpected) {
  for (std::string_view bad : {"", "8080", "nonsense", "127.0.0.1:", "127.0.0.1:65536",
                               "127.0.0.1:99999", "127.0.0.1:http", "127.0.0.1:-1", "::1:8080",
                               "[::1:8080", "[::1]", "[]:80", "[127.0.0.1]:80", "[nope]:80"}) {
    auto r = parse_listen_address(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, "SERVER_ADDRESS") << bad;
    EXPECT_NE(r.error().message.find("expected HOST:PORT"), std::string::npos) << bad;
    EXPECT_NE(r.error().message.find("'" + std::string(bad) + "'"), std::string::npos) << bad;
  }
  auto r = parse_listen_address("::1:8080");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("brackets"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace charkit::server
