#include "charkit/store/blob_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "charkit/core/sha256.h"
#include "store_test_support.h"

namespace charkit::store {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;

// 2026-03-15T12:00:00Z
constexpr std::int64_t kMarch2026 = 1773576000;

BlobStoreOptions fixed_clock(std::uint64_t max_bytes = kDefaultMaxUploadBytes) {
  BlobStoreOptions o;
  o.max_bytes = max_bytes;
  o.now = [] { return std::chrono::system_clock::from_time_t(kMarch2026); };
  return o;
}

std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++n;
  return n;
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

class BlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fresh_dir("blob"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(BlobStoreTest, PathLayoutIsKindYearMonthPrefixDigestExt) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store) << store.error().to_string();
  // SHA-256("abc") from FIPS 180-2, appendix B.1.
  const std::string abc_sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  auto blob = store->put(Kind::motion, "BVH", core::as_bytes("abc"));
  ASSERT_TRUE(blob) << blob.error().to_string();
  EXPECT_EQ(blob->sha256, abc_sha);
  EXPECT_EQ(blob->size, 3u);
  EXPECT_EQ(blob->ext, "bvh");
  EXPECT_FALSE(blob->reused);
  EXPECT_EQ(blob->key, "motions/2026/03/ba/" + abc_sha + ".bvh");
  EXPECT_EQ(read_all(dir_ / blob->key), "abc");
  EXPECT_TRUE(BlobStore::valid_key(blob->key));
  // Nothing left in tmp/.
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST_F(BlobStoreTest, StreamingHashMatchesOneShotSha256) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  std::vector<std::uint8_t> data(300'001);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint8_t>((i * 131) ^ (i >> 7));
  auto up = store->begin_upload(Kind::model, "glb");
  ASSERT_TRUE(up) << up.error().to_string();
  // Uneven chunks, including an empty one.
  std::size_t pos = 0, step = 1;
  while (pos < data.size()) {
    const std::size_t n = std::min(step, data.size() - pos);
    ASSERT_TRUE(up->write(core::Bytes(data).subspan(pos, n)));
    pos += n;
    step = step * 3 + 1;
  }
  ASSERT_TRUE(up->write({}));
  EXPECT_EQ(up->bytes_written(), data.size());
  auto blob = up->commit();
  ASSERT_TRUE(blob) << blob.error().to_string();
  EXPECT_EQ(blob->sha256, core::to_hex(core::sha256(data)));
  EXPECT_EQ(blob->size, data.size());
  EXPECT_EQ(fs::file_size(dir_ / blob->key), data.size());
  EXPECT_FALSE(up->open());
  EXPECT_EQ(up->write(core::as_bytes("x")).error().code, "STORE_UPLOAD_CLOSED");
}

TEST_F(BlobStoreTest, OverLimitAbortsAndLeavesNothing) {
  auto store = BlobStore::open(dir_, fixed_clock(10));
  ASSERT_TRUE(store);
  auto up = store->begin_upload(Kind::package, "bem");
  ASSERT_TRUE(up);
  ASSERT_TRUE(up->write(core::as_bytes("123456")));
  EXPECT_EQ(count_files(dir_), 1u);                // the temporary file
  ASSERT_TRUE(up->write(core::as_bytes("7890")));  // exactly at the limit is fine
  auto over = up->write(core::as_bytes("!"));
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, "STORE_TOO_LARGE");
  EXPECT_FALSE(up->open());
  EXPECT_EQ(count_files(dir_), 0u);
  EXPECT_FALSE(up->commit());
  EXPECT_EQ(count_files(dir_), 0u);
}

TEST_F(BlobStoreTest, AbortAndDestructorRemoveTheTemporaryFile) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  {
    auto up = store->begin_upload(Kind::model, "vrm");
    ASSERT_TRUE(up);
    ASSERT_TRUE(up->write(core::as_bytes("partial body")));
    EXPECT_EQ(count_files(dir_ / "tmp"), 1u);
  }  // client went away mid-body
  EXPECT_EQ(count_files(dir_), 0u);
  auto up = store->begin_upload(Kind::model, "vrm");
  ASSERT_TRUE(up);
  ASSERT_TRUE(up->write(core::as_bytes("partial body")));
  up->abort();
  up->abort();
  EXPECT_EQ(count_files(dir_), 0u);
}

TEST_F(BlobStoreTest, ExtensionWhitelistPerKind) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  EXPECT_TRUE(extension_allowed(Kind::model, "VRM"));
  EXPECT_TRUE(extension_allowed(Kind::motion, "bvh"));
  EXPECT_TRUE(extension_allowed(Kind::motion, "json"));
  EXPECT_TRUE(extension_allowed(Kind::package, "zip"));
  EXPECT_FALSE(extension_allowed(Kind::model, "bvh"));
  EXPECT_FALSE(extension_allowed(Kind::motion, "bem"));
  EXPECT_FALSE(extension_allowed(Kind::package, "exe"));
  EXPECT_FALSE(extension_allowed(Kind::model, ""));
  auto bad = store->begin_upload(Kind::model, "exe");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "STORE_KIND_EXTENSION");
  EXPECT_EQ(count_files(dir_), 0u);
  EXPECT_EQ(extension_of("../../etc/passwd"), "");
  EXPECT_EQ(extension_of("walk.cycle.BVH"), "bvh");
  EXPECT_EQ(extension_of("dir.d/noext"), "");
  EXPECT_EQ(extension_of(".bvh"), "");
}

TEST_F(BlobStoreTest, IdenticalUploadReusesTheStoredFile) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  auto a = store->put(Kind::motion, "bvh", core::as_bytes("HIERARCHY"));
  ASSERT_TRUE(a);
  struct stat before {};
  ASSERT_EQ(::stat((dir_ / a->key).c_str(), &before), 0);
  auto b = store->put(Kind::motion, "bvh", core::as_bytes("HIERARCHY"));
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->reused);
  EXPECT_EQ(b->key, a->key);
  struct stat after {};
  ASSERT_EQ(::stat((dir_ / a->key).c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(after.st_nlink, 1u);  // the temporary link is gone
  EXPECT_EQ(count_files(dir_), 1u);
  // A different month finds the older file too.
  BlobStoreOptions later = fixed_clock();
  later.now = [] { return std::chrono::system_clock::from_time_t(kMarch2026 + 90 * 86400); };
  auto store2 = BlobStore::open(dir_, later);
  ASSERT_TRUE(store2);
  auto c = store2->put(Kind::motion, "bvh", core::as_bytes("HIERARCHY"));
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->reused);
  EXPECT_EQ(c->key, a->key);
  auto found = store->find(a->sha256);
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, a->key);
}

TEST_F(BlobStoreTest, TwoIdenticalUploadsRacingStoreOneFile) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  std::vector<std::uint8_t> body(1 << 20, 0x5a);
  for (int round = 0; round < 5; ++round) {
    body[0] = static_cast<std::uint8_t>(round);
    std::atomic<int> ready{0};
    std::vector<core::Result<StoredBlob>> results(2, core::make_error("X", "not run"));
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        auto up = store->begin_upload(Kind::model, "glb");
        if (!up) return;
        ready++;
        while (ready.load() < 2) std::this_thread::yield();
        for (std::size_t off = 0; off < body.size(); off += 65536)
          if (!up->write(core::Bytes(body).subspan(off, 65536))) return;
        results[static_cast<std::size_t>(t)] = up->commit();
      });
    for (auto& th : threads) th.join();
    ASSERT_TRUE(results[0]) << results[0].error().to_string();
    ASSERT_TRUE(results[1]) << results[1].error().to_string();
    EXPECT_EQ(results[0]->key, results[1]->key);
    EXPECT_NE(results[0]->reused, results[1]->reused);  // exactly one wrote it
  }
  EXPECT_EQ(count_files(dir_), 5u);
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST_F(BlobStoreTest, RangeReads) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  auto blob = store->put(Kind::keypoints, "ndjson", core::as_bytes("0123456789"));
  ASSERT_TRUE(blob);
  auto r = store->open_blob(blob->key);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->size(), 10u);
  std::uint8_t buf[4];
  auto n = r->read_at(3, buf);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 4u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), 4), "3456");
  n = r->read_at(8, buf);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), 2), "89");
  n = r->read_at(10, buf);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u);
}

TEST_F(BlobStoreTest, KeysOutsideTheLayoutAreRefused) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  const std::string sha(64, 'a');
  EXPECT_TRUE(BlobStore::valid_key("models/2026/03/aa/" + sha + ".vrm"));
  const std::vector<std::string> bad_keys{std::string("../etc/passwd"),
                                          "/etc/passwd",
                                          "models/2026/03/aa/../../../../x",
                                          "models/2026/03/ab/" + sha + ".vrm",
                                          "models/2026/3/aa/" + sha + ".vrm",
                                          "tmp/2026/03/aa/" + sha + ".vrm",
                                          "models/2026/03/aa/" + sha + ".sh",
                                          "models/2026/03/aa/" + sha + ".vrm/x",
                                          "models/2026/03/AA/" + std::string(64, 'A') + ".vrm",
                                          std::string()};
  for (const std::string& bad : bad_keys) {
    EXPECT_FALSE(BlobStore::valid_key(bad)) << bad;
    auto r = store->open_blob(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, "STORE_BAD_KEY");
  }
  auto missing = store->open_blob("models/2026/03/aa/" + sha + ".vrm");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "STORE_NOT_FOUND");
}

TEST_F(BlobStoreTest, RemoveDeletesTheFileAndEmptyFolders) {
  auto store = BlobStore::open(dir_, fixed_clock());
  ASSERT_TRUE(store);
  auto blob = store->put(Kind::package, "zip", core::as_bytes("PK"));
  ASSERT_TRUE(blob);
  ASSERT_TRUE(store->remove(blob->key));
  EXPECT_FALSE(fs::exists(dir_ / blob->key));
  EXPECT_FALSE(fs::exists(dir_ / "packages" / "2026"));
  EXPECT_TRUE(store->remove(blob->key));  // already gone: fine
  auto found = store->find(blob->sha256);
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->has_value());
}

}  // namespace
}  // namespace charkit::store
