#include "charkit/store/catalogue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "charkit/store/blob_store.h"
#include "store_test_support.h"

namespace charkit::store {
namespace {

using testing::Backend;
using testing::StoreTest;

NewAsset asset_for(char fill, Kind kind = Kind::motion, std::string ext = "bvh") {
  NewAsset a;
  a.sha256 = std::string(64, fill);
  a.kind = kind;
  a.ext = ext;
  a.size = 1234;
  a.original_name = "walk cycle.bvh";
  a.storage_key = std::string(kind_name(kind)) + "/2026/03/" + std::string(2, fill) + "/" +
                  a.sha256 + "." + ext;
  return a;
}

class CatalogueTest : public StoreTest {};

TEST_P(CatalogueTest, MigrationsRunOnceAndReopeningIsIdempotent) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->backend(), GetParam() == Backend::sqlite ? "sqlite" : "postgresql");
  auto v = c->schema_version();
  ASSERT_TRUE(v) << v.error().to_string();
  EXPECT_EQ(*v, latest_schema_version());
  ASSERT_TRUE(c->put_asset(asset_for('a')));
  // Again on the same connection, and on new connections: no error, data kept.
  ASSERT_TRUE(c->migrate());
  for (int i = 0; i < 2; ++i) {
    auto again = open_catalogue();
    ASSERT_TRUE(again);
    EXPECT_EQ(*again->schema_version(), latest_schema_version());
    auto found = again->find_asset(std::string(64, 'a'));
    ASSERT_TRUE(found);
    EXPECT_TRUE(found->has_value());
  }
}

TEST_P(CatalogueTest, ConcurrentFirstOpensMigrateOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      auto c = Catalogue::open(url_, options());
      if (c && *(*c)->schema_version() == latest_schema_version()) ok++;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 4);
}

TEST_P(CatalogueTest, AssetsAreUniqueBySha256) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  auto a = c->put_asset(asset_for('b'));
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_TRUE(a->created);
  EXPECT_GT(a->record.id, 0);
  EXPECT_EQ(a->record.sha256, std::string(64, 'b'));
  EXPECT_EQ(a->record.kind, Kind::motion);
  EXPECT_EQ(a->record.size, 1234u);
  EXPECT_EQ(a->record.original_name, "walk cycle.bvh");
  EXPECT_EQ(a->record.created_at, clock_ms_.load());
  EXPECT_EQ(a->record.refcount, 0);
  NewAsset other_name = asset_for('b');
  other_name.original_name = "copy.bvh";
  auto b = c->put_asset(other_name);
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->created);
  EXPECT_EQ(b->record.id, a->record.id);
  EXPECT_EQ(b->record.original_name, "walk cycle.bvh");  // the first upload's name stays
  auto got = c->get_asset(a->record.id);
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->storage_key, asset_for('b').storage_key);
  auto none = c->get_asset(a->record.id + 100);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  NewAsset bad = asset_for('c');
  bad.sha256 = "short";
  EXPECT_FALSE(c->put_asset(bad));
}

TEST_P(CatalogueTest, ModelCrudAndDedup) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  auto asset = c->put_asset(asset_for('d', Kind::model, "vrm"));
  ASSERT_TRUE(asset);
  Model fields;
  fields.format = "vrm";
  fields.name = "Alicia";
  auto m = c->add_model(asset->record.id, fields);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_TRUE(m->created);
  EXPECT_EQ(m->record.format, "vrm");
  EXPECT_EQ(m->record.intake_state, PreprocessState::pending);
  // The same asset again: the same model, refcount unchanged.
  auto again = c->add_model(asset->record.id, fields);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->record.id, m->record.id);
  EXPECT_EQ((*c->get_asset(asset->record.id))->refcount, 1);

  Model upd = m->record;
  upd.vrm_version = "1.0";
  upd.skinned = true;
  upd.humanoid_bones = 52;
  upd.intake_state = PreprocessState::done;
  clock_ms_ += 5000;
  auto u = c->update_model(upd);
  ASSERT_TRUE(u) << u.error().to_string();
  EXPECT_TRUE(*u);
  auto got = c->get_model(m->record.id);
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->vrm_version, "1.0");
  EXPECT_TRUE((*got)->skinned);
  EXPECT_EQ((*got)->humanoid_bones, 52);
  EXPECT_EQ((*got)->intake_state, PreprocessState::done);
  EXPECT_EQ((*got)->updated_at, (*got)->created_at + 5000);
  upd.id = 9999;
  EXPECT_FALSE(*c->update_model(upd));

  auto no_asset = c->add_model(12345, fields);
  ASSERT_FALSE(no_asset);
  EXPECT_EQ(no_asset.error().code, "CATALOGUE_NOT_FOUND");
}

TEST_P(CatalogueTest, MotionDefaultsAndPagingWithFilters) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 7; ++i) {
    auto a = c->put_asset(asset_for(static_cast<char>('0' + i)));
    ASSERT_TRUE(a);
    Motion f;
    f.format = i % 2 ? "fbx" : "bvh";
    if (i == 6) f.preprocess_state = PreprocessState::failed;
    auto m = c->add_motion(a->record.id, f);
    ASSERT_TRUE(m) << m.error().to_string();
    EXPECT_EQ(m->record.fps, 30.0);  // 30 when unknown (model and motion format contract)
    ids.push_back(m->record.id);
  }
  // All, three per page.
  ListQuery q;
  q.limit = 3;
  std::vector<std::int64_t> seen;
  for (int page = 0; page < 5; ++page) {
    auto p = c->list_motions(q);
    ASSERT_TRUE(p) << p.error().to_string();
    EXPECT_EQ(p->total, 7);
    for (const Motion& m : p->items) seen.push_back(m.id);
    if (p->next_after_id == 0) break;
    q.after_id = p->next_after_id;
  }
  EXPECT_EQ(seen, ids);
  // Filters: format and state.
  ListQuery bvh;
  bvh.format = "bvh";
  auto p = c->list_motions(bvh);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->total, 4);
  ASSERT_EQ(p->items.size(), 4u);
  for (const Motion& m : p->items) EXPECT_EQ(m.format, "bvh");
  EXPECT_EQ(p->next_after_id, 0);
  ListQuery failed;
  failed.state = "failed";
  failed.format = "bvh";
  p = c->list_motions(failed);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->items.size(), 1u);
  EXPECT_EQ(p->items[0].id, ids[6]);
  // Exactly one full page: no next page.
  ListQuery exact;
  exact.limit = 7;
  p = c->list_motions(exact);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->items.size(), 7u);
  EXPECT_EQ(p->next_after_id, 0);
  // A filter value that looks like SQL is just a value.
  ListQuery injection;
  injection.format = "bvh' OR '1'='1";
  p = c->list_motions(injection);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->total, 0);
  Motion bad;
  bad.fps = 0;
  EXPECT_FALSE(c->add_motion(ids[0], bad));
}

TEST_P(CatalogueTest, DeleteReleasesAssetsByRefcount) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  auto src = c->put_asset(asset_for('e'));
  auto kp = c->put_asset(asset_for('f', Kind::keypoints, "ndjson"));
  ASSERT_TRUE(src);
  ASSERT_TRUE(kp);
  Motion f;
  f.format = "bvh";
  auto m = c->add_motion(src->record.id, f);
  ASSERT_TRUE(m);
  // Preprocessing done: attach the keypoint asset.
  Motion done = m->record;
  done.preprocess_state = PreprocessState::done;
  done.fps = 120;
  done.frames = 240;
  done.duration_s = 2.0;
  done.keypoints_asset_id = kp->record.id;
  auto u = c->update_motion(done);
  ASSERT_TRUE(u) << u.error().to_string();
  EXPECT_TRUE(u->found);
  EXPECT_TRUE(u->orphans.empty());
  EXPECT_EQ((*c->get_asset(kp->record.id))->refcount, 1);
  auto got = *c->get_motion(m->record.id);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->fps, 120.0);
  EXPECT_EQ(got->frames, 240);
  EXPECT_EQ(got->keypoints_asset_id, kp->record.id);

  auto pkg_asset = c->put_asset(asset_for('9', Kind::package, "bem"));
  ASSERT_TRUE(pkg_asset);
  Package pf;
  pf.container = "bem";
  auto pkg = c->add_package(pkg_asset->record.id, pf);
  ASSERT_TRUE(pkg) << pkg.error().to_string();
  Package pv = pkg->record;
  pv.validity = Validity::invalid;
  pv.bem_version = "1.5";
  pv.report_json = R"({"valid":false,"issues":[{"code":"BEM_X"}]})";
  ASSERT_TRUE(*c->update_package(pv));
  ListQuery invalid;
  invalid.state = "invalid";
  auto pl = c->list_packages(invalid);
  ASSERT_TRUE(pl);
  ASSERT_EQ(pl->items.size(), 1u);
  EXPECT_EQ(pl->items[0].report_json, pv.report_json);
  EXPECT_EQ(pl->items[0].bem_version, "1.5");

  // Deleting the motion releases both of its assets.
  auto r = c->delete_motion(m->record.id);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_TRUE(r->found);
  ASSERT_EQ(r->orphans.size(), 2u);
  std::set<std::string> keys{r->orphans[0].storage_key, r->orphans[1].storage_key};
  EXPECT_TRUE(keys.count(asset_for('e').storage_key));
  EXPECT_TRUE(keys.count(asset_for('f', Kind::keypoints, "ndjson").storage_key));
  EXPECT_FALSE(c->get_asset(src->record.id)->has_value());
  EXPECT_FALSE(c->get_motion(m->record.id)->has_value());
  auto again = c->delete_motion(m->record.id);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->found);

  auto rp = c->delete_package(pkg->record.id);
  ASSERT_TRUE(rp);
  ASSERT_EQ(rp->orphans.size(), 1u);
  EXPECT_EQ(rp->orphans[0].id, pkg_asset->record.id);
}

TEST_P(CatalogueTest, SharedAssetStaysWhileReferenced) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  // The same bytes as a motion's keypoints and as a motion source elsewhere.
  auto shared = c->put_asset(asset_for('a', Kind::keypoints, "ndjson"));
  auto src1 = c->put_asset(asset_for('1'));
  auto src2 = c->put_asset(asset_for('2'));
  ASSERT_TRUE(shared && src1 && src2);
  Motion f;
  f.format = "bvh";
  auto m1 = c->add_motion(src1->record.id, f);
  auto m2 = c->add_motion(src2->record.id, f);
  ASSERT_TRUE(m1 && m2);
  for (auto* m : {&m1->record, &m2->record}) {
    m->keypoints_asset_id = shared->record.id;
    ASSERT_TRUE(c->update_motion(*m));
  }
  EXPECT_EQ((*c->get_asset(shared->record.id))->refcount, 2);
  auto r1 = c->delete_motion(m1->record.id);
  ASSERT_TRUE(r1);
  ASSERT_EQ(r1->orphans.size(), 1u);  // only its source
  EXPECT_EQ(r1->orphans[0].id, src1->record.id);
  EXPECT_EQ((*c->get_asset(shared->record.id))->refcount, 1);
  // Re-preprocessing replaces the keypoints: the old asset goes.
  auto kp2 = c->put_asset(asset_for('b', Kind::keypoints, "ndjson"));
  ASSERT_TRUE(kp2);
  m2->record.keypoints_asset_id = kp2->record.id;
  auto u = c->update_motion(m2->record);
  ASSERT_TRUE(u);
  ASSERT_EQ(u->orphans.size(), 1u);
  EXPECT_EQ(u->orphans[0].id, shared->record.id);
  // Unreferenced uploads (no record was ever added) can be swept.
  auto lone = c->put_asset(asset_for('c'));
  ASSERT_TRUE(lone);
  auto swept = c->remove_unreferenced_assets();
  ASSERT_TRUE(swept);
  ASSERT_EQ(swept->size(), 1u);
  EXPECT_EQ((*swept)[0].id, lone->record.id);
}

// Two identical uploads racing, each on its own connection: one file, one row.
TEST_P(CatalogueTest, IdenticalUploadRaceGivesOneFileAndOneRow) {
  auto store = BlobStore::open(dir_ / "blobs");
  ASSERT_TRUE(store);
  std::vector<std::unique_ptr<Catalogue>> conns;
  for (int t = 0; t < 2; ++t) {
    conns.push_back(open_catalogue());
    ASSERT_TRUE(conns.back());
  }
  const std::string body(200'000, 'M');
  std::atomic<int> ready{0};
  std::vector<std::int64_t> motion_ids(2, -1), asset_ids(2, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      auto up = store->begin_upload(Kind::motion, "bvh");
      if (!up) return;
      ready++;
      while (ready.load() < 2) std::this_thread::yield();
      if (!up->write(core::as_bytes(body))) return;
      auto blob = up->commit();
      if (!blob) return;
      Catalogue& c = *conns[static_cast<std::size_t>(t)];
      auto a = c.put_asset(
          NewAsset{blob->sha256, Kind::motion, "bvh", blob->size, "upload.bvh", blob->key});
      if (!a) return;
      Motion f;
      f.format = "bvh";
      auto m = c.add_motion(a->record.id, f);
      if (!m) return;
      asset_ids[static_cast<std::size_t>(t)] = a->record.id;
      motion_ids[static_cast<std::size_t>(t)] = m->record.id;
    });
  for (auto& th : threads) th.join();
  ASSERT_GT(motion_ids[0], 0);
  EXPECT_EQ(motion_ids[0], motion_ids[1]);
  EXPECT_EQ(asset_ids[0], asset_ids[1]);
  auto all = conns[0]->list_motions({});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->total, 1);
  EXPECT_EQ((*conns[0]->get_asset(asset_ids[0]))->refcount, 1);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ / "blobs"))
    if (e.is_regular_file()) ++files;
  EXPECT_EQ(files, 1u);
}

TEST(CatalogueOpen, RefusesUnknownUrls) {
  auto r = Catalogue::open("mysql://localhost/x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "CATALOGUE_BAD_URL");
  r = Catalogue::open("sqlite:");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "CATALOGUE_BAD_URL");
  r = Catalogue::open("sqlite:/nonexistent-dir-charkit/x/y.db");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "CATALOGUE_OPEN");
  CatalogueOptions o;
  o.pg_schema = "x; DROP TABLE y";
  r = Catalogue::open("postgresql://127.0.0.1:1/none", o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "CATALOGUE_BAD_URL");
  auto mem = Catalogue::open("sqlite::memory:");
  ASSERT_TRUE(mem) << mem.error().to_string();
  EXPECT_EQ(*(*mem)->schema_version(), latest_schema_version());
}

INSTANTIATE_TEST_SUITE_P(Backends, CatalogueTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         testing::backend_name);

}  // namespace
}  // namespace charkit::store
