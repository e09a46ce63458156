// The SQLite connection keeps its prepared statements by SQL text. Reusing
// one must behave exactly as a fresh one: new bindings each time, no
// bindings left from the previous use, no read snapshot held after exec()
// returns (WAL: a statement left mid-step keeps its snapshot, and another
// connection's commits stay invisible), usable again after a failed step,
// re-prepared after a schema change, and bounded in number.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "charkit/store/detail/sql_connection.h"
#include "store_test_support.h"

namespace charkit::store::detail {
namespace {

using Params = std::vector<Value>;

class SqliteStatementsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_dir("stmt"); }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::unique_ptr<Connection> open() {
    auto c = open_sqlite((dir_ / "db.sqlite").string(), std::chrono::seconds(5));
    EXPECT_TRUE(c) << (c ? "" : c.error().to_string());
    return c ? std::move(*c) : nullptr;
  }
  static std::string cell(const Rows& r, std::size_t row, std::size_t col) {
    if (row >= r.rows.size() || col >= r.rows[row].size() || !r.rows[row][col]) return "<none>";
    return *r.rows[row][col];
  }
  std::filesystem::path dir_;
};

constexpr const char* kInsert = "INSERT INTO t (k, v) VALUES (?, ?)";
constexpr const char* kSelect = "SELECT v FROM t WHERE k = ?";

TEST_F(SqliteStatementsTest, ReusedStatementsTakeNewBindingsAndKeepNoOldOnes) {
  auto db = open();
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)"));
  for (std::int64_t k = 1; k <= 3; ++k)
    ASSERT_TRUE(db->exec(kInsert, Params{Value{k}, Value{"v" + std::to_string(k)}}));
  for (std::int64_t k : {3, 1, 2, 1}) {
    auto r = db->exec(kSelect, Params{Value{k}});
    ASSERT_TRUE(r) << r.error().to_string();
    ASSERT_EQ(r->rows.size(), 1u);
    EXPECT_EQ(cell(*r, 0, 0), "v" + std::to_string(k));
  }
  // The same text with no parameters: the earlier binding must not linger
  // (an unbound parameter is NULL, which matches no key).
  auto none = db->exec(kSelect);
  ASSERT_TRUE(none) << none.error().to_string();
  EXPECT_TRUE(none->rows.empty());
}

TEST_F(SqliteStatementsTest, NoSnapshotIsHeldAfterExecReturns) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)"));
  for (std::int64_t k = 1; k <= 5; ++k)
    ASSERT_TRUE(a->exec(kInsert, Params{Value{k}, Value{std::string("x")}}));
  const char* count = "SELECT COUNT(*) FROM t";
  auto before = a->exec(count);
  ASSERT_TRUE(before);
  EXPECT_EQ(cell(*before, 0, 0), "5");
  // A multi-row read through the cached statement, then a commit by another
  // connection: the first connection must see it on its next read.
  auto rows = a->exec("SELECT k FROM t ORDER BY k");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->rows.size(), 5u);
  ASSERT_TRUE(b->exec(kInsert, Params{Value{std::int64_t{6}}, Value{std::string("y")}}));
  auto after = a->exec(count);
  ASSERT_TRUE(after);
  EXPECT_EQ(cell(*after, 0, 0), "6");
  // And a writer is not blocked by a reader's cached statement.
  ASSERT_TRUE(b->begin_write());
  ASSERT_TRUE(b->exec("DELETE FROM t WHERE k = ?", Params{Value{std::int64_t{6}}}));
  ASSERT_TRUE(b->commit());
}

TEST_F(SqliteStatementsTest, AStatementThatFailedWorksOnItsNextUse) {
  auto db = open();
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"));
  ASSERT_TRUE(db->exec(kInsert, Params{Value{std::int64_t{1}}, Value{std::string("a")}}));
  auto dup = db->exec(kInsert, Params{Value{std::int64_t{1}}, Value{std::string("b")}});
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, "CATALOGUE_SQL");
  EXPECT_NE(dup.error().message.find("UNIQUE"), std::string::npos) << dup.error().message;
  auto null_v = db->exec(kInsert, Params{Value{std::int64_t{2}}, Value{}});
  ASSERT_FALSE(null_v);
  EXPECT_NE(null_v.error().message.find("NOT NULL"), std::string::npos) << null_v.error().message;
  auto ok = db->exec(kInsert, Params{Value{std::int64_t{2}}, Value{std::string("c")}});
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(ok->changes, 1);
  auto r = db->exec(kSelect, Params{Value{std::int64_t{2}}});
  ASSERT_TRUE(r);
  EXPECT_EQ(cell(*r, 0, 0), "c");
  // SQL SQLite refuses is reported, and not kept.
  auto bad = db->exec("SELEC v FROM t");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("prepare"), std::string::npos) << bad.error().message;
}

TEST_F(SqliteStatementsTest, ACachedStatementFollowsASchemaChangeByAnotherConnection) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)"));
  ASSERT_TRUE(a->exec(kInsert, Params{Value{std::int64_t{1}}, Value{std::string("a")}}));
  const char* all = "SELECT * FROM t";
  auto r1 = a->exec(all);
  ASSERT_TRUE(r1);
  ASSERT_EQ(r1->rows.size(), 1u);
  EXPECT_EQ(r1->rows[0].size(), 2u);
  ASSERT_TRUE(b->exec("ALTER TABLE t ADD COLUMN w INTEGER DEFAULT 7"));
  auto r2 = a->exec(all);
  ASSERT_TRUE(r2) << r2.error().to_string();
  ASSERT_EQ(r2->rows.size(), 1u);
  ASSERT_EQ(r2->rows[0].size(), 3u);
  EXPECT_EQ(cell(*r2, 0, 2), "7");
}

TEST_F(SqliteStatementsTest, ManyDistinctStatementsStayCorrect) {
  auto db = open();
  ASSERT_TRUE(db);
  // More distinct texts than the connection keeps: each still answers right,
  // also when an early one comes back after the cache was emptied.
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 600; ++i) {
      auto r = db->exec("SELECT ? + " + std::to_string(i), Params{Value{std::int64_t{round}}});
      ASSERT_TRUE(r) << r.error().to_string();
      ASSERT_EQ(cell(*r, 0, 0), std::to_string(i + round));
    }
  }
}

}  // namespace
}  // namespace charkit::store::detail
