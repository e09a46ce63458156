// `charkit token create|list|revoke` on the server's SQLite catalogue: the
// secret goes to stdout once, list shows hints not secrets, revoke once.
#include <gtest/gtest.h>

#include <string>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

using core::Json;

class TokenCli : public ScratchDir {};

TEST_F(TokenCli, CreateListRevoke) {
  const std::string data = "--data " + quote(dir_ / "data");
  auto none = run_charkit("token list " + data + " --json");
  ASSERT_EQ(none.exit_code, 0);
  EXPECT_TRUE(Json::parse(none.out)["tokens"].empty());

  auto created = run_charkit("token create --scope write --name 'ci runner' " + data);
  ASSERT_EQ(created.exit_code, 0);
  std::string secret = created.out;
  while (!secret.empty() && secret.back() == '\n') secret.pop_back();
  EXPECT_EQ(secret.size(), 47u);
  EXPECT_EQ(secret.rfind("ckt_", 0), 0u);
  EXPECT_EQ(secret.find('\n'), std::string::npos);  // the secret alone on stdout

  auto json = run_charkit("token create --scope admin --json " + data);
  ASSERT_EQ(json.exit_code, 0);
  auto j = Json::parse(json.out);
  EXPECT_EQ(j["scope"], "admin");
  EXPECT_EQ(j["secret"].get<std::string>().size(), 47u);

  auto list = run_charkit("token list --json " + data);
  ASSERT_EQ(list.exit_code, 0);
  auto tokens = Json::parse(list.out)["tokens"];
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0]["name"], "ci runner");
  EXPECT_EQ(tokens[0]["scope"], "write");
  EXPECT_EQ(tokens[0]["hint"], secret.substr(4, 8));
  EXPECT_EQ(list.out.find(secret), std::string::npos);  // never listed
  auto text = run_charkit("token list " + data);
  EXPECT_NE(text.out.find("ci runner"), std::string::npos);

  const std::string id = std::to_string(tokens[0]["id"].get<int>());
  EXPECT_EQ(run_charkit("token revoke " + id + " " + data).exit_code, 0);
  EXPECT_EQ(run_charkit("token revoke " + id + " " + data).exit_code, 1);
  auto active = Json::parse(run_charkit("token list --active --json " + data).out)["tokens"];
  EXPECT_EQ(active.size(), 1u);
}

TEST_F(TokenCli, UsageErrors) {
  const std::string data = "--data " + quote(dir_ / "data");
  EXPECT_EQ(run_charkit("token create --scope root " + data).exit_code, 2);
  auto bare = run_charkit("token");  // a bare group prints its help (docs/cli.md)
  EXPECT_EQ(bare.exit_code, 0);
  EXPECT_NE(bare.out.find("revoke"), std::string::npos) << bare.out;
  EXPECT_EQ(run_charkit("token revoke").exit_code, 2);
  EXPECT_EQ(run_charkit("token list --db postgresql://nobody@127.0.0.1:1/x").exit_code, 2);
  auto help = run_charkit("token create --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--scope"), std::string::npos);
}

}  // namespace
}  // namespace charkit::clitest
