// BlobStore on both backends: every test is a TEST_P over {local, s3}. The
// local instances always run; the S3 instances run against the server that
// the ctest fixture starts (scripts/s3_test_server: s3rver on loopback),
// found through CHARKIT_TEST_S3_ENV (its env file) or CHARKIT_TEST_S3_URL plus
// AWS_* credentials, and skip without them. Each S3 test works under a
// fresh prefix of the bucket.
#include "charkit/store/blob_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "charkit/core/error_codes.h"
#include "charkit/core/sha256.h"
#include "charkit/store/detail/blob_backend.h"
#include "charkit/store/detail/s3_client.h"
#include "store_test_support.h"

namespace charkit::store {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;

enum class BlobBackend { local, s3 };

void PrintTo(BlobBackend b, std::ostream* os) {
  *os << (b == BlobBackend::local ? "local" : "s3");
}

// 2026-03-15T12:00:00Z
constexpr std::int64_t kMarch2026 = 1773576000;

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file()) ++n;
  return n;
}

/// The S3 test server's URL ("" when there is none): CHARKIT_TEST_S3_ENV
/// names a file of KEY=VALUE lines (scripts/s3_test_server writes it) that is
/// loaded into the environment once; else CHARKIT_TEST_S3_URL as set.
std::string s3_test_url() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("CHARKIT_TEST_S3_ENV");
    if (!env || !*env) return;
    std::ifstream f(env);
    std::string line;
    while (std::getline(f, line)) {
      const auto eq = line.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      ::setenv(line.substr(0, eq).c_str(), line.substr(eq + 1).c_str(), 1);
    }
  });
  const char* url = std::getenv("CHARKIT_TEST_S3_URL");
  return url ? url : "";
}

/// `url` with `sub` appended to its prefix.
std::string with_sub_prefix(const std::string& url, const std::string& sub) {
  const auto q = url.find('?');
  std::string base = url.substr(0, q);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/" + sub + (q == std::string::npos ? "" : url.substr(q));
}

class BlobStoreTest : public ::testing::TestWithParam<BlobBackend> {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("blob");
    if (s3()) {
      const std::string url = s3_test_url();
      if (url.empty())
        GTEST_SKIP() << "CHARKIT_TEST_S3_URL is not set; the S3 variant needs a server "
                        "(ctest starts one with scripts/s3_test_server)";
      static std::atomic<int> counter{0};
      location_ = with_sub_prefix(
          url, "t" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
                   std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() %
                                  1000000));
    } else {
      location_ = dir_.string();
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  bool s3() const { return GetParam() == BlobBackend::s3; }
  bool local() const { return !s3(); }

  BlobStoreOptions options(std::uint64_t max_bytes = kDefaultMaxUploadBytes) const {
    BlobStoreOptions o;
    o.max_bytes = max_bytes;
    o.now = [] { return std::chrono::system_clock::from_time_t(kMarch2026); };
    if (s3()) o.tmp_dir = dir_ / "tmp";
    return o;
  }
  core::Result<BlobStore> open(const BlobStoreOptions& o) const {
    return BlobStore::open(location_, o);
  }
  fs::path tmp_dir() const { return dir_ / "tmp"; }
  std::size_t count_tmp() const { return count_files(tmp_dir()); }

  /// The stored blobs: files outside tmp/ (local) or the objects under the
  /// prefix with blob keys (S3; the sha256/ index objects are not blobs).
  std::vector<std::string> stored_keys() const {
    std::vector<std::string> keys;
    for (std::string& k : all_objects())
      if (BlobStore::valid_key(k)) keys.push_back(std::move(k));
    return keys;
  }
  /// Every file outside tmp/ (local) or every object under the prefix (S3), relative.
  std::vector<std::string> all_objects() const {
    std::vector<std::string> keys;
    if (local()) {
      for (const auto& e : fs::recursive_directory_iterator(dir_))
        if (e.is_regular_file() && e.path().parent_path() != tmp_dir())
          keys.push_back(fs::relative(e.path(), dir_).generic_string());
      return keys;
    }
    auto loc = s3::parse_url(location_);
    auto cred = s3::credentials_from_env();
    if (!loc || !cred) {
      ADD_FAILURE() << "S3 location or credentials";
      return keys;
    }
    s3::Client client(*loc, *cred, {});
    std::string token;
    for (int page = 0; page < 100; ++page) {
      s3::Call c;
      c.query = {{"list-type", "2"}, {"prefix", loc->prefix + "/"}};
      if (!token.empty()) c.query.emplace_back("continuation-token", token);
      auto r = client.send(c);
      if (!r || r->status != 200) {
        ADD_FAILURE() << "listing the bucket failed";
        return keys;
      }
      auto doc = xml::parse(r->body);
      if (!doc) {
        ADD_FAILURE() << doc.error().to_string();
        return keys;
      }
      for (const xml::Node* n : doc->all("Contents"))
        keys.push_back(n->child_text("Key").substr(loc->prefix.size() + 1));
      if (doc->child_text("IsTruncated") != "true") break;
      token = doc->child_text("NextContinuationToken");
    }
    return keys;
  }

  static std::string read_blob(const BlobStore& store, const std::string& key) {
    auto r = store.open_blob(key);
    if (!r) {
      ADD_FAILURE() << r.error().to_string();
      return {};
    }
    std::string out(static_cast<std::size_t>(r->size()), '\0');
    std::size_t done = 0;
    while (done < out.size()) {
      auto n = r->read_at(
          done, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(out.data()) + done,
                                        out.size() - done));
      if (!n) {
        ADD_FAILURE() << n.error().to_string();
        return {};
      }
      if (*n == 0) break;
      done += *n;
    }
    out.resize(done);
    return out;
  }

  fs::path dir_;
  std::string location_;
};

TEST_P(BlobStoreTest, PathLayoutIsKindYearMonthPrefixDigestExt) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_EQ(store->is_s3(), s3());
  // SHA-256("abc") from FIPS 180-2, appendix B.1.
  const std::string abc_sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  auto blob = store->put(Kind::motion, "BVH", core::as_bytes("abc"));
  ASSERT_TRUE(blob) << blob.error().to_string();
  EXPECT_EQ(blob->sha256, abc_sha);
  EXPECT_EQ(blob->size, 3u);
  EXPECT_EQ(blob->ext, "bvh");
  EXPECT_FALSE(blob->reused);
  EXPECT_EQ(blob->key, "motions/2026/03/ba/" + abc_sha + ".bvh");
  EXPECT_EQ(read_blob(*store, blob->key), "abc");
  if (local()) {
    EXPECT_EQ(read_all(dir_ / blob->key), "abc");
  }
  EXPECT_EQ(stored_keys(), std::vector<std::string>{blob->key});
  EXPECT_TRUE(BlobStore::valid_key(blob->key));
  // Nothing left in tmp/.
  EXPECT_TRUE(fs::is_empty(tmp_dir()));
}

TEST_P(BlobStoreTest, StreamingHashMatchesOneShotSha256) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
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
  auto reader = store->open_blob(blob->key);
  ASSERT_TRUE(reader) << reader.error().to_string();
  EXPECT_EQ(reader->size(), data.size());
  EXPECT_FALSE(up->open());
  EXPECT_EQ(up->write(core::as_bytes("x")).error().code, "STORE_UPLOAD_CLOSED");
}

TEST_P(BlobStoreTest, OverLimitAbortsAndLeavesNothing) {
  auto store = open(options(10));
  ASSERT_TRUE(store) << store.error().to_string();
  auto up = store->begin_upload(Kind::package, "bem");
  ASSERT_TRUE(up);
  ASSERT_TRUE(up->write(core::as_bytes("123456")));
  EXPECT_EQ(count_tmp(), 1u);                      // the temporary file
  ASSERT_TRUE(up->write(core::as_bytes("7890")));  // exactly at the limit is fine
  auto over = up->write(core::as_bytes("!"));
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, "STORE_TOO_LARGE");
  EXPECT_FALSE(up->open());
  EXPECT_EQ(count_tmp(), 0u);
  EXPECT_FALSE(up->commit());
  EXPECT_EQ(count_tmp(), 0u);
  EXPECT_TRUE(stored_keys().empty());
}

TEST_P(BlobStoreTest, AbortAndDestructorRemoveTheTemporaryFile) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  {
    auto up = store->begin_upload(Kind::model, "vrm");
    ASSERT_TRUE(up);
    ASSERT_TRUE(up->write(core::as_bytes("partial body")));
    EXPECT_EQ(count_tmp(), 1u);
  }  // client went away mid-body
  EXPECT_EQ(count_tmp(), 0u);
  auto up = store->begin_upload(Kind::model, "vrm");
  ASSERT_TRUE(up);
  ASSERT_TRUE(up->write(core::as_bytes("partial body")));
  up->abort();
  up->abort();
  EXPECT_EQ(count_tmp(), 0u);
  EXPECT_TRUE(stored_keys().empty());
}

TEST_P(BlobStoreTest, ExtensionWhitelistPerKind) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
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
  EXPECT_EQ(count_tmp(), 0u);
  EXPECT_EQ(extension_of("../../etc/passwd"), "");
  EXPECT_EQ(extension_of("walk.cycle.BVH"), "bvh");
  EXPECT_EQ(extension_of("dir.d/noext"), "");
  EXPECT_EQ(extension_of(".bvh"), "");
}

TEST_P(BlobStoreTest, IdenticalUploadReusesTheStoredFile) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  auto a = store->put(Kind::motion, "bvh", core::as_bytes("HIERARCHY"));
  ASSERT_TRUE(a) << a.error().to_string();
  struct stat before {};
  if (local()) {
    ASSERT_EQ(::stat((dir_ / a->key).c_str(), &before), 0);
  }
  auto b = store->put(Kind::motion, "bvh", core::as_bytes("HIERARCHY"));
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_TRUE(b->reused);
  EXPECT_EQ(b->key, a->key);
  if (local()) {
    struct stat after {};
    ASSERT_EQ(::stat((dir_ / a->key).c_str(), &after), 0);
    EXPECT_EQ(before.st_ino, after.st_ino);
    EXPECT_EQ(after.st_nlink, 1u);  // the temporary link is gone
  }
  EXPECT_EQ(stored_keys().size(), 1u);
  // A different month finds the older file too, and so does another kind.
  BlobStoreOptions later = options();
  later.now = [] { return std::chrono::system_clock::from_time_t(kMarch2026 + 90 * 86400); };
  auto store2 = open(later);
  ASSERT_TRUE(store2) << store2.error().to_string();
  auto c = store2->put(Kind::motion, "bvh", core::as_bytes("HIERARCHY"));
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_TRUE(c->reused);
  EXPECT_EQ(c->key, a->key);
  auto d = store2->put(Kind::package, "zip", core::as_bytes("HIERARCHY"));
  ASSERT_TRUE(d) << d.error().to_string();
  EXPECT_TRUE(d->reused);
  EXPECT_EQ(d->key, a->key);
  EXPECT_EQ(stored_keys().size(), 1u);
  auto found = store->find(a->sha256);
  ASSERT_TRUE(found) << found.error().to_string();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, a->key);
  auto none = store->find(std::string(64, '0'));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto bad = store->find("ABC");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "STORE_BAD_DIGEST");
}

TEST_P(BlobStoreTest, TwoIdenticalUploadsRacingStoreOneFile) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  std::vector<std::uint8_t> body(1 << 20, 0x5a);
  for (int round = 0; round < 5; ++round) {
    body[0] = static_cast<std::uint8_t>(round);
    std::atomic<int> ready{0};
    std::vector<core::Result<StoredBlob>> results(
        2, core::make_error(core::codes::INTERNAL, "not run"));
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
    // Locally exactly one link() wins; on S3 both may PUT the same bytes
    // under the same key (docs/store.md): one object either way.
    if (local()) {
      EXPECT_NE(results[0]->reused, results[1]->reused);
    }
    EXPECT_EQ(read_blob(*store, results[0]->key), std::string(body.begin(), body.end()));
  }
  EXPECT_EQ(stored_keys().size(), 5u);
  EXPECT_TRUE(fs::is_empty(tmp_dir()));
}

// The tests of the local store's folders: object storage has none, so these
// are instantiated for the local backend only.
class LocalBlobStoreTest : public BlobStoreTest {};

// Deleting a blob tidies the empty fan-out folders above it while other
// uploads create them: no upload may fail for it (it did, with STORE_IO, on
// about 1 in 150 operations under churn).
TEST_P(LocalBlobStoreTest, UploadsAndDeletesChurningTheSameFoldersNeverFail) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  constexpr int kThreads = 4;
  constexpr int kOpsPerThread = 1250;  // 5,000 operations: uploads and deletes
  std::atomic<int> failures{0};
  std::atomic<int> ops{0};
  std::string first_failure;
  std::mutex failure_mutex;
  auto fail = [&](const std::string& what) {
    if (failures.fetch_add(1) == 0) {
      std::lock_guard lock(failure_mutex);
      first_failure = what;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::string> mine;
      for (int i = 0; i < kOpsPerThread; ++i) {
        // Mostly one blob at a time per thread, so folders empty out often.
        if (!mine.empty() && (i % 3 != 0 || mine.size() > 2)) {
          if (auto r = store->remove(mine.back()); !r) fail(r.error().to_string());
          mine.pop_back();
        } else {
          const std::string body = "churn " + std::to_string(t) + " " + std::to_string(i);
          auto r = store->put(
              Kind::motion, "bvh",
              core::Bytes(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()));
          if (!r)
            fail(r.error().to_string());
          else
            mine.push_back(r->key);
        }
        ops.fetch_add(1);
      }
      for (const auto& k : mine)
        if (auto r = store->remove(k); !r) fail(r.error().to_string());
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ops.load(), kThreads * kOpsPerThread);
  EXPECT_EQ(failures.load(), 0) << first_failure;
  EXPECT_TRUE(stored_keys().empty());
}

TEST_P(BlobStoreTest, RangeReads) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  auto blob = store->put(Kind::keypoints, "ndjson", core::as_bytes("0123456789"));
  ASSERT_TRUE(blob) << blob.error().to_string();
  auto r = store->open_blob(blob->key);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->size(), 10u);
  std::uint8_t buf[4];
  auto n = r->read_at(3, buf);
  ASSERT_TRUE(n) << n.error().to_string();
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

TEST_P(BlobStoreTest, RangeReadsAcrossReadAheadWindowsFromManyThreads) {
  BlobStoreOptions o = options();
  o.s3_read_ahead = 4096;
  auto store = open(o);
  ASSERT_TRUE(store) << store.error().to_string();
  std::vector<std::uint8_t> data(100'000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 3);
  auto blob = store->put(Kind::model, "glb", data);
  ASSERT_TRUE(blob) << blob.error().to_string();
  auto r = store->open_blob(blob->key);
  ASSERT_TRUE(r) << r.error().to_string();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::uint8_t> buf(10'000);
      for (int i = 0; i < 25; ++i) {
        const std::size_t off = rng() % data.size();
        const std::size_t len = 1 + rng() % (i % 5 == 0 ? buf.size() : 3000);
        auto n = r->read_at(off, std::span<std::uint8_t>(buf.data(), len));
        const std::size_t expect = std::min(len, data.size() - off);
        if (!n || *n != expect || !std::equal(buf.begin(), buf.begin() + *n, data.begin() + off))
          mismatches++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_P(BlobStoreTest, LargeUploadsGoInParts) {
  BlobStoreOptions o = options();
  o.s3_multipart_threshold = 64 * 1024;
  o.s3_part_size = 50'000;  // s3rver takes small parts; AWS wants 5 MiB
  auto store = open(o);
  ASSERT_TRUE(store) << store.error().to_string();
  std::vector<std::uint8_t> data(230'001);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i ^ (i >> 9));
  auto blob = store->put(Kind::package, "zip", data);
  ASSERT_TRUE(blob) << blob.error().to_string();
  EXPECT_FALSE(blob->reused);
  EXPECT_EQ(read_blob(*store, blob->key), std::string(data.begin(), data.end()));
  EXPECT_EQ(stored_keys(), std::vector<std::string>{blob->key});
  auto again = store->put(Kind::package, "zip", data);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_TRUE(again->reused);
  EXPECT_TRUE(fs::is_empty(tmp_dir()));
}

TEST_P(BlobStoreTest, LocalFileGivesAPathForDecoders) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  auto blob = store->put(Kind::motion, "bvh", core::as_bytes("HIERARCHY\nROOT Hips\n"));
  ASSERT_TRUE(blob) << blob.error().to_string();
  fs::path path;
  {
    auto file = store->local_file(blob->key);
    ASSERT_TRUE(file) << file.error().to_string();
    path = file->path();
    EXPECT_EQ(read_all(path), "HIERARCHY\nROOT Hips\n");
    EXPECT_EQ(file->temporary(), s3());
    if (local()) {
      EXPECT_EQ(path, dir_ / blob->key);
    }
    if (s3()) {
      EXPECT_EQ(path.parent_path(), tmp_dir());
    }
    LocalBlob moved = std::move(*file);
    EXPECT_EQ(moved.path(), path);
  }
  EXPECT_EQ(fs::exists(path), local());  // the S3 download goes with the object
  const std::string missing = "motions/2026/03/aa/" + std::string(64, 'a') + ".bvh";
  auto none = store->local_file(missing);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "STORE_NOT_FOUND");
  EXPECT_EQ(store->local_file("../x").error().code, "STORE_BAD_KEY");
  EXPECT_TRUE(fs::is_empty(tmp_dir()));
}

TEST_P(BlobStoreTest, KeysOutsideTheLayoutAreRefused) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
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
    EXPECT_EQ(store->remove(bad).error().code, "STORE_BAD_KEY");
  }
  auto missing = store->open_blob("models/2026/03/aa/" + sha + ".vrm");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "STORE_NOT_FOUND");
}

TEST_P(BlobStoreTest, RemoveDeletesTheFileAndEmptyFolders) {
  auto store = open(options());
  ASSERT_TRUE(store) << store.error().to_string();
  auto blob = store->put(Kind::package, "zip", core::as_bytes("PK"));
  ASSERT_TRUE(blob) << blob.error().to_string();
  ASSERT_TRUE(store->remove(blob->key));
  if (local()) {
    EXPECT_FALSE(fs::exists(dir_ / blob->key));
    EXPECT_FALSE(fs::exists(dir_ / "packages" / "2026"));
  }
  EXPECT_TRUE(all_objects().empty());  // on S3 the index entry went too
  EXPECT_EQ(store->open_blob(blob->key).error().code, "STORE_NOT_FOUND");
  EXPECT_TRUE(store->remove(blob->key));  // already gone: fine
  auto found = store->find(blob->sha256);
  ASSERT_TRUE(found) << found.error().to_string();
  EXPECT_FALSE(found->has_value());
}

// A pid that is certainly not running: a child that has exited and been reaped.
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void touch(const fs::path& p, std::chrono::system_clock::time_point mtime) {
  std::ofstream(p) << "partial";
  const auto t = std::chrono::system_clock::to_time_t(mtime);
  fs::last_write_time(
      p, fs::file_time_type::clock::now() -
             (std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(t)));
}

TEST_P(BlobStoreTest, StaleTemporaryFilesAreRemovedAtOpen) {
  fs::create_directories(tmp_dir());
  // This host's name as the store writes it, from a real temporary file.
  auto live = detail::make_temp_file(tmp_dir(), "upload");
  ASSERT_TRUE(live) << live.error().to_string();
  ::close(live->first);
  const std::string live_name = live->second.filename().string();  // upload-{host}-{pid}-XXXXXX
  const std::string pid = std::to_string(::getpid());
  const auto at = live_name.rfind("-" + pid + "-");
  ASSERT_NE(at, std::string::npos);
  const std::string host = live_name.substr(7, at - 7);

  const auto now = std::chrono::system_clock::now();
  const auto old = now - std::chrono::hours(25);
  const fs::path dead =
      tmp_dir() / ("upload-" + host + "-" + std::to_string(dead_pid()) + "-aB3dE9");
  const fs::path dead_download =
      tmp_dir() / ("download-" + host + "-" + std::to_string(dead_pid()) + "-Zz0000");
  const fs::path live_old = tmp_dir() / ("upload-" + host + "-" + pid + "-OLD123");
  const fs::path other_old = tmp_dir() / "upload-other-host.example-4242-abcdef";
  const fs::path other_fresh = tmp_dir() / "upload-other-host.example-4242-ghijkl";
  const fs::path legacy_old = tmp_dir() / "upload-Q1w2E3";
  const fs::path legacy_fresh = tmp_dir() / "upload-R4t5Y6";
  const fs::path unrelated = tmp_dir() / "notes.txt";
  touch(dead, now);
  touch(dead_download, now);
  touch(live_old, old);  // a live process's file stays, however old
  touch(other_old, old);
  touch(other_fresh, now);
  touch(legacy_old, old);
  touch(legacy_fresh, now);
  touch(unrelated, old);

  BlobStoreOptions o = options();
  o.now = [] { return std::chrono::system_clock::now(); };
  o.tmp_dir = tmp_dir();
  auto store = open(o);
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(dead_download));
  EXPECT_TRUE(fs::exists(live->second));
  EXPECT_TRUE(fs::exists(live_old));
  EXPECT_FALSE(fs::exists(other_old));
  EXPECT_TRUE(fs::exists(other_fresh));
  EXPECT_FALSE(fs::exists(legacy_old));
  EXPECT_TRUE(fs::exists(legacy_fresh));
  EXPECT_TRUE(fs::exists(unrelated));
  // The store still works with the survivors around.
  auto blob = store->put(Kind::model, "glb", core::as_bytes("glTF"));
  ASSERT_TRUE(blob) << blob.error().to_string();
  EXPECT_EQ(count_tmp(), 5u);
}

TEST_P(BlobStoreTest, TemporaryFolderCanBeSet) {
  BlobStoreOptions o = options();
  o.tmp_dir = dir_ / "elsewhere" / "tmp";
  auto store = open(o);
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_EQ(store->tmp_dir(), o.tmp_dir);
  auto up = store->begin_upload(Kind::model, "vrm");
  ASSERT_TRUE(up);
  ASSERT_TRUE(up->write(core::as_bytes("VRM")));
  EXPECT_EQ(count_files(o.tmp_dir), 1u);
  auto blob = up->commit();
  ASSERT_TRUE(blob) << blob.error().to_string();
  EXPECT_EQ(count_files(o.tmp_dir), 0u);
  EXPECT_EQ(read_blob(*store, blob->key), "VRM");
}

std::string backend_name(const ::testing::TestParamInfo<BlobBackend>& param) {
  return param.param == BlobBackend::local ? "local" : "s3";
}

INSTANTIATE_TEST_SUITE_P(Backends, BlobStoreTest,
                         ::testing::Values(BlobBackend::local, BlobBackend::s3), backend_name);
INSTANTIATE_TEST_SUITE_P(Backends, LocalBlobStoreTest, ::testing::Values(BlobBackend::local),
                         backend_name);

}  // namespace
}  // namespace charkit::store
