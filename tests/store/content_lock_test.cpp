// Per-content locks (store/content_lock.h) on SQLite and PostgreSQL: mutual
// exclusion between connections, waiting, STORE_BUSY, expiry of a dead
// holder's lock, several digests at once, and orphan removal that re-checks.
#include "charkit/store/content_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "store_test_support.h"

namespace charkit::store {
namespace {

using namespace std::chrono_literals;
using testing::Backend;
using testing::StoreTest;

class ContentLockTest : public StoreTest {};

const std::string kA(64, 'a');
const std::string kB(64, 'b');

TEST_P(ContentLockTest, ExcludesAnotherConnectionUntilReleased) {
  auto c1 = open_catalogue();
  auto c2 = open_catalogue();
  ASSERT_TRUE(c1 && c2);
  auto held = lock_content(*c1, {kA});
  ASSERT_TRUE(held) << held.error().to_string();
  auto busy = lock_content(*c2, {kA}, 15min, 50ms);
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().code, "STORE_BUSY");
  // Another digest is free, and a set that includes a held one is all-or-nothing.
  EXPECT_TRUE(lock_content(*c2, {kB}, 15min, 50ms));
  EXPECT_FALSE(lock_content(*c2, {kB, kA}, 15min, 50ms));
  // A waiter gets it once the holder lets go.
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto w = lock_content(*c2, {kA}, 15min, 10s);
    got = w.ok();
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(got.load());
  held->release();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_FALSE(lock_content(*c1, {"not hex"}));
}

TEST_P(ContentLockTest, ADeadHoldersLockExpires) {
  auto c1 = open_catalogue();
  auto c2 = open_catalogue();
  ASSERT_TRUE(c1 && c2);
  auto held = lock_content(*c1, {kA}, 5s);
  ASSERT_TRUE(held);
  EXPECT_FALSE(lock_content(*c2, {kA}, 5s, 20ms));
  clock_ms_ += 6000;  // the holder neither released nor renewed: it is gone
  auto taken = lock_content(*c2, {kA}, 5s, 20ms);
  ASSERT_TRUE(taken) << taken.error().to_string();
  // The old holder's late release does not free the new holder's lock.
  held->release();
  EXPECT_FALSE(lock_content(*c1, {kA}, 5s, 20ms));
}

TEST_P(ContentLockTest, OrphanRemovalSkipsBytesUploadedAgain) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  auto blobs = BlobStore::open(dir_ / "blobs");
  ASSERT_TRUE(blobs);
  const std::string text = "HIERARCHY\n";
  auto b = blobs->put(Kind::motion, "bvh",
                      core::Bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  ASSERT_TRUE(b);
  auto a = c->put_asset(NewAsset{b->sha256, Kind::motion, "bvh", b->size, "a.bvh", b->key});
  ASSERT_TRUE(a);
  // The asset row exists again (an upload came back): the blob stays.
  EXPECT_TRUE(remove_orphan_blobs(*c, *blobs, {a->record}).empty());
  EXPECT_TRUE(blobs->open_blob(b->key).ok());
  // No row records it: it goes.
  auto swept = c->remove_unreferenced_assets();
  ASSERT_TRUE(swept);
  ASSERT_EQ(swept->size(), 1u);
  auto gone = remove_orphan_blobs(*c, *blobs, *swept);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], b->sha256);
  EXPECT_FALSE(blobs->open_blob(b->key).ok());
}

INSTANTIATE_TEST_SUITE_P(Catalogue, ContentLockTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         testing::backend_name);

}  // namespace
}  // namespace charkit::store
