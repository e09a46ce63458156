// The warnings of a motion's preprocessing (schema version 4: motions.warnings,
// a JSON array of {code, message}): stored and read back on both backends,
// bounded, and added to an existing schema-3 database by the migration.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "charkit/store/catalogue.h"
#include "charkit/store/detail/sql_connection.h"
#include "store_test_support.h"

namespace charkit::store {
namespace {

using testing::Backend;
using testing::StoreTest;

NewAsset motion_asset(char fill) {
  NewAsset a;
  a.sha256 = std::string(64, fill);
  a.kind = Kind::motion;
  a.ext = "bvh";
  a.size = 10;
  a.original_name = "walk.bvh";
  a.storage_key = "motions/2026/03/" + std::string(2, fill) + "/" + a.sha256 + ".bvh";
  return a;
}

class MotionWarningsTest : public StoreTest {
 protected:
  // A raw connection to this test's database, for what the API cannot do.
  std::unique_ptr<detail::Connection> raw() {
    auto c = GetParam() == Backend::sqlite
                 ? detail::open_sqlite((dir_ / "catalogue.db").string(), std::chrono::seconds(10))
                 : detail::open_postgresql(url_, schema_);
    if (!c) {
      ADD_FAILURE() << c.error().to_string();
      return nullptr;
    }
    return std::move(*c);
  }
};

TEST_P(MotionWarningsTest, StoredReadBackAndListed) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  EXPECT_GE(latest_schema_version(), 4);
  auto a = c->put_asset(motion_asset('a'));
  ASSERT_TRUE(a);
  auto m = c->add_motion(a->record.id, Motion{});
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_TRUE(m->record.warnings.empty());  // a new motion has none

  Motion u = m->record;
  u.preprocess_state = PreprocessState::done;
  u.warnings = {{"MOTION_FEW_MAPPED_JOINTS", "only 7 of the 15 points; missing: 'left_hip'"},
                {"BVH_FRAME_COUNT", "1:1: \"quotes\", \\ and é"}};
  auto r = c->update_motion(u);
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(r->found);
  auto got = c->get_motion(u.id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->warnings, u.warnings);
  auto page = c->list_motions({});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].warnings, u.warnings);

  // The column holds the JSON text written out by hand here.
  auto db = raw();
  ASSERT_TRUE(db);
  const detail::Value id{u.id};
  auto cell = db->exec("SELECT warnings FROM motions WHERE id = ?", std::span(&id, 1));
  ASSERT_TRUE(cell) << cell.error().to_string();
  ASSERT_EQ(cell->rows.size(), 1u);
  EXPECT_EQ(
      *cell->rows[0][0],
      R"([{"code":"MOTION_FEW_MAPPED_JOINTS","message":"only 7 of the 15 points; missing: 'left_hip'"},)"
      R"({"code":"BVH_FRAME_COUNT","message":"1:1: \"quotes\", \\ and é"}])");

  // A later run without warnings clears them.
  u.warnings.clear();
  ASSERT_TRUE(c->update_motion(u));
  got = c->get_motion(u.id);
  ASSERT_TRUE(got && *got);
  EXPECT_TRUE((*got)->warnings.empty());
}

TEST_P(MotionWarningsTest, BoundedAndDamagedCellsReadAsNone) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  auto a = c->put_asset(motion_asset('b'));
  ASSERT_TRUE(a);
  Motion f;
  f.warnings.push_back({"BAD_UTF8", "\xFF"});  // repaired, not refused
  for (int i = 0; i < 80; ++i)
    f.warnings.push_back({"W" + std::to_string(i), std::string(5000, 'x')});
  auto m = c->add_motion(a->record.id, f);
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_EQ(m->record.warnings.size(), kMaxMotionWarnings);
  EXPECT_EQ(m->record.warnings[0].message, "\xEF\xBF\xBD");  // U+FFFD
  EXPECT_EQ(m->record.warnings[1].code, "W0");
  EXPECT_EQ(m->record.warnings[1].message.size(), kMaxMotionWarningBytes);
  EXPECT_EQ(m->record.warnings.back().code, "W48");

  auto db = raw();
  ASSERT_TRUE(db);
  const std::vector<detail::Value> p{std::string("not json ["), m->record.id};
  ASSERT_TRUE(db->exec("UPDATE motions SET warnings = ? WHERE id = ?", p));
  auto got = c->get_motion(m->record.id);
  ASSERT_TRUE(got && *got);
  EXPECT_TRUE((*got)->warnings.empty());
  const std::vector<detail::Value> p2{
      std::string(R"([1, {"code": "A"}, {"code": "B", "message": "m"}])"), m->record.id};
  ASSERT_TRUE(db->exec("UPDATE motions SET warnings = ? WHERE id = ?", p2));
  got = c->get_motion(m->record.id);
  ASSERT_TRUE(got && *got);
  ASSERT_EQ((*got)->warnings.size(), 1u);
  EXPECT_EQ((*got)->warnings[0], (MotionWarning{"B", "m"}));
}

TEST_P(MotionWarningsTest, MigrationAddsTheColumnToASchema3Database) {
  std::int64_t id = 0;
  {
    auto c = open_catalogue();
    ASSERT_TRUE(c);
    auto a = c->put_asset(motion_asset('c'));
    ASSERT_TRUE(a);
    Motion f;
    f.format = "bvh";
    f.frames = 12;
    auto m = c->add_motion(a->record.id, f);
    ASSERT_TRUE(m);
    id = m->record.id;
  }
  {
    // Back to what a schema-3 build left: no column, no version-4 row.
    auto db = raw();
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("DROP TABLE api_sessions"));  // version 5's
    ASSERT_TRUE(db->exec("ALTER TABLE motions DROP COLUMN warnings"));
    ASSERT_TRUE(db->exec("DELETE FROM schema_version WHERE version >= 4"));
    auto v = db->exec("SELECT max(version) FROM schema_version");
    ASSERT_TRUE(v);
    EXPECT_EQ(*v->rows[0][0], "3");
  }
  auto c = open_catalogue();  // migrates
  ASSERT_TRUE(c);
  EXPECT_EQ(*c->schema_version(), latest_schema_version());
  auto got = c->get_motion(id);
  ASSERT_TRUE(got && *got) << (got ? "" : got.error().to_string());
  EXPECT_EQ((*got)->frames, 12);
  EXPECT_TRUE((*got)->warnings.empty());  // existing rows: '[]'
  Motion u = **got;
  u.warnings = {{"MOTION_FEW_MAPPED_JOINTS", "m"}};
  ASSERT_TRUE(c->update_motion(u));
  got = c->get_motion(id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->warnings, u.warnings);
}

INSTANTIATE_TEST_SUITE_P(Backends, MotionWarningsTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         testing::backend_name);

}  // namespace
}  // namespace charkit::store
