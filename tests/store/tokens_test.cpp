// API tokens (store/tokens.h) on SQLite and PostgreSQL: secrets shown once
// and stored hashed, scopes, revocation, last use.
#include "charkit/store/tokens.h"

#include <gtest/gtest.h>

#include <set>

#include "charkit/core/sha256.h"
#include "store_test_support.h"

namespace charkit::store {
namespace {

using testing::Backend;
using testing::StoreTest;

class TokensTest : public StoreTest {};

TEST_P(TokensTest, CreateVerifyRevoke) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  TokenStore tokens(*c);
  EXPECT_EQ(*tokens.count(), 0);
  auto t = tokens.create(Scope::write, "ci uploader");
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->secret.size(), kTokenSecretLength);
  EXPECT_EQ(t->secret.rfind("ckt_", 0), 0u);
  EXPECT_EQ(t->token.scope, Scope::write);
  EXPECT_EQ(t->token.name, "ci uploader");
  EXPECT_EQ(t->token.hint, t->secret.substr(4, 8));
  EXPECT_FALSE(t->token.last_used_at);
  EXPECT_EQ(*tokens.count(), 1);
  EXPECT_EQ(*tokens.count(true), 1);

  // The secret is stored only as its SHA-256.
  auto other = open_catalogue();
  ASSERT_TRUE(other);
  auto v = TokenStore(*other).verify(t->secret);
  ASSERT_TRUE(v) << v.error().to_string();
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ((*v)->id, t->token.id);
  EXPECT_EQ((*v)->scope, Scope::write);
  ASSERT_TRUE((*v)->last_used_at);
  EXPECT_EQ(*(*v)->last_used_at, clock_ms_.load());

  // Wrong, truncated, malformed or foreign secrets are not tokens.
  std::string wrong = t->secret;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(tokens.verify(wrong)->has_value());
  EXPECT_FALSE(tokens.verify(t->secret.substr(0, 20))->has_value());
  EXPECT_FALSE(tokens.verify("")->has_value());
  EXPECT_FALSE(tokens.verify("ckt_" + std::string(43, '!'))->has_value());
  EXPECT_FALSE(tokens.verify(t->secret + "x")->has_value());

  // Revocation is immediate and once.
  EXPECT_TRUE(*tokens.revoke(t->token.id));
  EXPECT_FALSE(*tokens.revoke(t->token.id));
  EXPECT_FALSE(*tokens.revoke(9999));
  EXPECT_FALSE(tokens.verify(t->secret)->has_value());
  EXPECT_EQ(*tokens.count(true), 0);
  EXPECT_EQ(*tokens.count(), 1);  // a revoked token still counts as having had one
  auto all = tokens.list();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_TRUE((*all)[0].revoked_at);
  EXPECT_TRUE(tokens.list(false)->empty());
}

TEST_P(TokensTest, LastUseIsRecordedAtMostOnceAMinute) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  TokenStore tokens(*c);
  auto t = tokens.create(Scope::read, "");
  ASSERT_TRUE(t);
  const std::int64_t t0 = clock_ms_.load();
  EXPECT_EQ(*(*tokens.verify(t->secret))->last_used_at, t0);
  clock_ms_ += 30'000;
  EXPECT_EQ(*(*tokens.verify(t->secret))->last_used_at, t0);
  clock_ms_ += 31'000;
  EXPECT_EQ(*(*tokens.verify(t->secret))->last_used_at, t0 + 61'000);
  EXPECT_EQ(*(*tokens.list())[0].last_used_at, t0 + 61'000);
}

TEST_P(TokensTest, SecretsAreDistinctAndNamesChecked) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  TokenStore tokens(*c);
  std::set<std::string> secrets;
  for (int i = 0; i < 20; ++i) secrets.insert(tokens.create(Scope::admin, "n")->secret);
  EXPECT_EQ(secrets.size(), 20u);
  auto bad = tokens.create(Scope::read, "\xFF");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "TOKEN_INVALID");
  EXPECT_FALSE(tokens.create(Scope::read, std::string(201, 'a')));
}

TEST(TokenScope, NamesAndOrder) {
  EXPECT_EQ(parse_scope("admin"), Scope::admin);
  EXPECT_FALSE(parse_scope("root"));
  EXPECT_TRUE(scope_allows(Scope::admin, Scope::write));
  EXPECT_TRUE(scope_allows(Scope::write, Scope::read));
  EXPECT_FALSE(scope_allows(Scope::read, Scope::write));
  EXPECT_FALSE(scope_allows(Scope::write, Scope::admin));
}

INSTANTIATE_TEST_SUITE_P(Catalogue, TokensTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         testing::backend_name);

}  // namespace
}  // namespace charkit::store
