// The S3 backend against a scripted server (fake_http_server.h): what
// s3rver cannot show — signed headers and payload hashes of every request,
// stale multipart uploads aborted at open, failures of a multipart upload
// aborting it, error answers, garbage, oversized answers and timeouts — and
// the URL and credential rules. These always run (no s3rver needed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>

#include "charkit/core/sha256.h"
#include "charkit/store/blob_store.h"
#include "charkit/store/detail/s3_client.h"
#include "fake_http_server.h"
#include "store_test_support.h"

namespace charkit::store {
namespace {

namespace fs = std::filesystem;
using testing::FakeHttpServer;
using testing::fresh_dir;
using Reply = FakeHttpServer::Reply;
using Request = FakeHttpServer::Request;

std::string iso8601(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buf;
}

std::string hex_sha256(std::string_view s) {
  return core::to_hex(core::sha256(core::as_bytes(s)));
}

Reply s3_error(int status, const std::string& code, const std::string& message) {
  return Reply{status,
               "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code +
                   "</Code><Message>" + message + "</Message></Error>",
               {},
               {}};
}

const Reply kNoUploads{
    200,
    "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>",
    {},
    {}};

/// Sets the AWS variables for the test and restores them afterwards.
class EnvGuard {
 public:
  EnvGuard(std::optional<std::string> key, std::optional<std::string> secret,
           std::optional<std::string> token) {
    for (const char* n : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}) {
      const char* v = std::getenv(n);
      saved_[n] = v ? std::optional<std::string>(v) : std::nullopt;
    }
    set("AWS_ACCESS_KEY_ID", key);
    set("AWS_SECRET_ACCESS_KEY", secret);
    set("AWS_SESSION_TOKEN", token);
  }
  ~EnvGuard() {
    for (const auto& [n, v] : saved_) set(n.c_str(), v);
  }

 private:
  static void set(const char* name, const std::optional<std::string>& v) {
    if (v)
      ::setenv(name, v->c_str(), 1);
    else
      ::unsetenv(name);
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

class S3StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = fresh_dir("s3fake"); }
  void TearDown() override { fs::remove_all(dir_); }

  BlobStoreOptions options() const {
    BlobStoreOptions o;
    o.tmp_dir = dir_ / "tmp";
    o.s3_timeout = std::chrono::milliseconds(5000);
    return o;
  }
  std::string url(const FakeHttpServer& server, const std::string& prefix = "p") const {
    return "s3://bucket/" + prefix + "?region=eu-test-1&endpoint=" + server.endpoint();
  }

  fs::path dir_;
  EnvGuard env_{"AKIDTEST", "secret/key+1", "session-token-1"};
};

TEST(S3UrlTest, UrlsAreParsedStrictly) {
  auto a = s3::parse_url("s3://bucket");
  ASSERT_TRUE(a) << a.error().to_string();
  EXPECT_EQ(a->bucket, "bucket");
  EXPECT_EQ(a->prefix, "");
  EXPECT_EQ(a->region, "us-east-1");
  EXPECT_EQ(a->endpoint, "https://s3.us-east-1.amazonaws.com");
  EXPECT_EQ(a->host, "s3.us-east-1.amazonaws.com");
  auto b = s3::parse_url("s3://my-bucket.1/a/b/?region=eu-west-3");
  ASSERT_TRUE(b) << b.error().to_string();
  EXPECT_EQ(b->prefix, "a/b");
  EXPECT_EQ(b->endpoint, "https://s3.eu-west-3.amazonaws.com");
  auto c = s3::parse_url("s3://bkt/p?endpoint=http://127.0.0.1:9000&region=garage");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(c->host, "127.0.0.1:9000");
  EXPECT_EQ(c->region, "garage");
  auto d = s3::parse_url("s3://bkt?endpoint=http%3A%2F%2FMinio.Local%3A80%2F");
  ASSERT_TRUE(d) << d.error().to_string();
  EXPECT_EQ(d->endpoint, "http://minio.local");
  EXPECT_EQ(d->host, "minio.local");
  auto e = s3::parse_url("s3://bkt?endpoint=https://[::1]:8443");
  ASSERT_TRUE(e) << e.error().to_string();
  EXPECT_EQ(e->host, "[::1]:8443");

  for (const char* bad :
       {"s3://", "s3://ab", "s3://bucket/a//b", "s3://bucket/../x", "s3://bucket/a/./b",
        "s3://bu cket", "s3://bucket?endpoint=ftp://x", "s3://bucket?endpoint=http://h/path",
        "s3://bucket?foo=1", "s3://bucket?region=EU%20WEST", "s3://bucket?endpoint=http://h:99999",
        "s3://bucket?endpoint=http://h:", "s3://bucket?endpoint=http://", "s3://bucket/%zz",
        "s3://bucket?endpoint=http://user@h", "s3://bucket#x"}) {
    auto r = s3::parse_url(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_EQ(r.error().code, "STORE_S3_URL") << bad;
    }
  }
  EXPECT_TRUE(s3::is_s3_url("s3://x"));
  EXPECT_FALSE(s3::is_s3_url("/data/blobs"));
  EXPECT_FALSE(s3::is_s3_url("S3://x"));
}

TEST_F(S3StoreTest, MissingCredentialsAreReported) {
  EnvGuard none(std::nullopt, std::nullopt, std::nullopt);
  auto store = BlobStore::open("s3://bucket?endpoint=http://127.0.0.1:9", options());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "STORE_S3_CREDENTIALS");
  EnvGuard only_key("AKID", std::nullopt, std::nullopt);
  store = BlobStore::open("s3://bucket?endpoint=http://127.0.0.1:9", options());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "STORE_S3_CREDENTIALS");
  auto bad_url = BlobStore::open("s3://bucket?endpoint=gopher://x", options());
  ASSERT_FALSE(bad_url);
  EXPECT_EQ(bad_url.error().code, "STORE_S3_URL");
}

TEST_F(S3StoreTest, StaleMultipartUploadsAreAbortedAtOpenAndEveryRequestIsSigned) {
  const std::string sha(64, 'a');
  const std::string ours = "p/models/2026/01/aa/" + sha + ".glb";
  const auto now = std::chrono::system_clock::now();
  const std::string old = iso8601(now - std::chrono::hours(48));
  const std::string fresh = iso8601(now - std::chrono::hours(1));
  auto upload = [](const std::string& key, const std::string& id, const std::string& when) {
    return "<Upload><Key>" + key + "</Key><UploadId>" + id + "</UploadId><Initiated>" + when +
           "</Initiated></Upload>";
  };
  FakeHttpServer server([&](const Request& r) -> Reply {
    if (r.method == "GET" && r.target.find("uploads=") != std::string::npos) {
      if (r.target.find("key-marker=") == std::string::npos)
        return Reply{200,
                     "<?xml version=\"1.0\"?><ListMultipartUploadsResult xmlns=\"x\">"
                     "<Bucket>bucket</Bucket><IsTruncated>true</IsTruncated>"
                     "<NextKeyMarker>" +
                         ours +
                         "</NextKeyMarker><NextUploadIdMarker>new-ours</NextUploadIdMarker>" +
                         upload(ours, "old-ours", old) + upload(ours, "new-ours", fresh) +
                         upload("p/other/file.bin", "old-foreign", old) +
                         upload("models/2026/01/aa/" + sha + ".glb", "outside", old) +
                         upload(ours, "undated", "yesterday") + "</ListMultipartUploadsResult>",
                     {},
                     {}};
      return Reply{200,
                   "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>" +
                       upload(ours, "old-2", old) + "</ListMultipartUploadsResult>",
                   {},
                   {}};
    }
    if (r.method == "DELETE") return Reply{204, "", {}, {}};
    return s3_error(400, "Unexpected", r.method + " " + r.target);
  });
  auto store = BlobStore::open(url(server), options());
  ASSERT_TRUE(store) << store.error().to_string();
  EXPECT_TRUE(store->is_s3());
  EXPECT_EQ(store->location(), url(server));

  std::vector<std::string> aborted;
  const auto requests = server.requests();
  for (const Request& r : requests) {
    if (r.method == "DELETE") aborted.push_back(r.target);
    // Signed: credential scope with our region and service, the headers, the hashes.
    const std::string auth = r.headers.count("authorization") ? r.headers.at("authorization") : "";
    EXPECT_EQ(auth.rfind("AWS4-HMAC-SHA256 Credential=AKIDTEST/", 0), 0u) << auth;
    EXPECT_NE(auth.find("/eu-test-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;"
                        "x-amz-date;x-amz-security-token, Signature="),
              std::string::npos)
        << auth;
    EXPECT_EQ(r.headers.at("host"), "127.0.0.1:" + std::to_string(server.port()));
    EXPECT_EQ(r.headers.at("x-amz-content-sha256"), hex_sha256(r.body));
    EXPECT_EQ(r.headers.at("x-amz-security-token"), "session-token-1");
    EXPECT_EQ(r.headers.at("x-amz-date").size(), 16u);
  }
  std::vector<std::string> listings;
  for (const Request& r : requests)
    if (r.method == "GET") listings.push_back(r.target);
  EXPECT_EQ(listings,
            (std::vector<std::string>{"/bucket?prefix=p%2F&uploads=",
                                      "/bucket?key-marker=p%2Fmodels%2F2026%2F01%2Faa%2F" + sha +
                                          ".glb&prefix=p%2F&upload-id-marker=new-ours&uploads="}));
  EXPECT_EQ(aborted, (std::vector<std::string>{"/bucket/" + ours + "?uploadId=old-ours",
                                               "/bucket/" + ours + "?uploadId=old-2"}));
}

TEST_F(S3StoreTest, ServicesWithoutTheListingStillOpenButWrongSetupsDoNot) {
  struct Case {
    Reply reply;
    const char* code;  // nullptr: opens
    const char* text;
  };
  const std::vector<Case> cases{
      {s3_error(501, "NotImplemented", "no listing here"), nullptr, ""},
      {s3_error(405, "MethodNotAllowed", "no"), nullptr, ""},
      {s3_error(403, "AccessDenied", "no permission to list uploads"), nullptr, ""},
      {s3_error(403, "SignatureDoesNotMatch", "check your key"), "STORE_S3_HTTP",
       "HTTP 403 SignatureDoesNotMatch: check your key"},
      {s3_error(404, "NoSuchBucket", "The specified bucket does not exist"), "STORE_S3_HTTP",
       "NoSuchBucket"},
      {Reply{400, "not xml at all", {}, {}}, "STORE_S3_HTTP", "HTTP 400"},
      {Reply{200, "<ListMultipartUploadsResult><Upload>", {}, {}}, "STORE_S3_XML", "unclosed"},
      {Reply{200, "<Something/>", {}, {}}, "STORE_S3_RESPONSE", "<Something>"},
      {Reply{200, std::string(5u << 20, 'x'), {}, {}}, "STORE_S3_RESPONSE", "exceeds"},
      {Reply{
           400, "<Error><Code>X</Code><Message>" + std::string(100000, 'm') + "</Message>", {}, {}},
       "STORE_S3_HTTP", "HTTP 400"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reply.body.substr(0, 80));
    FakeHttpServer server([&](const Request&) { return c.reply; });
    auto store = BlobStore::open(url(server), options());
    if (!c.code) {
      EXPECT_TRUE(store) << store.error().to_string();
      continue;
    }
    ASSERT_FALSE(store);
    EXPECT_EQ(store.error().code, c.code);
    EXPECT_NE(store.error().message.find(c.text), std::string::npos) << store.error().message;
    EXPECT_LT(store.error().message.size(), 2000u);
  }
}

TEST_F(S3StoreTest, TransientErrorsAreRetriedThenReported) {
  FakeHttpServer server([](const Request&) { return s3_error(503, "SlowDown", "Reduce rate"); });
  auto store = BlobStore::open(url(server), options());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "STORE_S3_HTTP");
  EXPECT_NE(store.error().message.find("HTTP 503 SlowDown: Reduce rate"), std::string::npos);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST_F(S3StoreTest, SilentServersTimeOut) {
  FakeHttpServer server([](const Request&) {
    Reply r = kNoUploads;
    r.delay = std::chrono::milliseconds(700);
    return r;
  });
  BlobStoreOptions o = options();
  o.s3_timeout = std::chrono::milliseconds(150);
  const auto start = std::chrono::steady_clock::now();
  auto store = BlobStore::open(url(server), o);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "STORE_S3_NETWORK");
  EXPECT_LT(took, std::chrono::milliseconds(2000));  // 3 tries of 150 ms and two pauses
}

TEST_F(S3StoreTest, NobodyListening) {
  int port = 0;
  {
    FakeHttpServer gone([](const Request&) { return kNoUploads; });
    port = gone.port();
  }
  BlobStoreOptions o = options();
  auto store =
      BlobStore::open("s3://bucket/p?endpoint=http://127.0.0.1:" + std::to_string(port), o);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "STORE_S3_NETWORK");
}

/// A tiny in-memory S3 (path style) that records whether every payload hash was right.
struct MemoryS3 {
  std::mutex mutex;
  std::map<std::string, std::string> objects;  // "/bucket/key" → bytes
  std::map<int, std::string> parts;
  int fail_part = 0;                 // answer 500 to this part number
  bool fail_object_puts = false;     // answer 503 SlowDown to PUTs of blobs (not index entries)
  bool complete_with_error = false;  // 200 with an <Error> body
  bool ignore_range = false;
  int bad_hashes = 0;

  static std::string query_value(const std::string& target, const std::string& name) {
    const auto q = target.find('?');
    if (q == std::string::npos) return {};
    std::string rest = target.substr(q + 1);
    while (!rest.empty()) {
      const auto amp = rest.find('&');
      const std::string item = rest.substr(0, amp);
      if (item.compare(0, name.size() + 1, name + "=") == 0) return item.substr(name.size() + 1);
      if (amp == std::string::npos) break;
      rest = rest.substr(amp + 1);
    }
    return {};
  }

  Reply handle(const Request& r) {
    std::lock_guard lock(mutex);
    if (r.headers.at("x-amz-content-sha256") != hex_sha256(r.body)) ++bad_hashes;
    const std::string path = r.target.substr(0, r.target.find('?'));
    const bool has_query = r.target.find('?') != std::string::npos;
    if (r.method == "GET" && path == "/bucket") return kNoUploads;
    if (r.method == "HEAD") {
      auto it = objects.find(path);
      if (it == objects.end()) return Reply{404, "", {}, {}};
      return Reply{200, "", {{"Content-Length", std::to_string(it->second.size())}}, {}};
    }
    if (r.method == "GET") {
      auto it = objects.find(path);
      if (it == objects.end()) return s3_error(404, "NoSuchKey", "none");
      auto range = r.headers.find("range");
      if (range == r.headers.end() || ignore_range) return Reply{200, it->second, {}, {}};
      std::size_t a = 0, b = 0;
      std::sscanf(range->second.c_str(), "bytes=%zu-%zu", &a, &b);
      if (a >= it->second.size()) return s3_error(416, "InvalidRange", "");
      b = std::min(b, it->second.size() - 1);
      return Reply{206,
                   it->second.substr(a, b - a + 1),
                   {{"Content-Range", "bytes " + std::to_string(a) + "-" + std::to_string(b) + "/" +
                                          std::to_string(it->second.size())}},
                   {}};
    }
    if (r.method == "PUT" && !has_query) {
      if (fail_object_puts && path.find("/sha256/") == std::string::npos)
        return s3_error(503, "SlowDown", "reduce your request rate");
      objects[path] = r.body;
      return Reply{200, "", {{"ETag", "\"e\""}}, {}};
    }
    if (r.method == "PUT") {
      const int n = std::stoi(query_value(r.target, "partNumber"));
      if (n == fail_part) return s3_error(500, "InternalError", "part lost");
      parts[n] = r.body;
      return Reply{200, "", {{"ETag", "\"part" + std::to_string(n) + "\""}}, {}};
    }
    if (r.method == "POST" && query_value(r.target, "uploadId").empty()) {
      parts.clear();
      return Reply{200,
                   "<InitiateMultipartUploadResult><Bucket>bucket</Bucket><UploadId>U-1&amp;2"
                   "</UploadId></InitiateMultipartUploadResult>",
                   {},
                   {}};
    }
    if (r.method == "POST") {
      if (complete_with_error) return s3_error(200, "InternalError", "assembly failed");
      std::string all;
      for (const auto& [n, bytes] : parts) {
        if (r.body.find("<PartNumber>" + std::to_string(n) + "</PartNumber><ETag>&quot;part" +
                        std::to_string(n) + "&quot;</ETag>") == std::string::npos)
          return s3_error(400, "InvalidPart", "part " + std::to_string(n));
        all += bytes;
      }
      objects[path] = all;
      return Reply{200, "<CompleteMultipartUploadResult/>", {}, {}};
    }
    if (r.method == "DELETE") {
      objects.erase(path);
      return Reply{204, "", {}, {}};
    }
    return s3_error(400, "Unexpected", r.method);
  }
};

TEST_F(S3StoreTest, BlobsRoundTripWithCorrectPayloadHashes) {
  MemoryS3 s3;
  FakeHttpServer server([&](const Request& r) { return s3.handle(r); });
  BlobStoreOptions o = options();
  o.s3_multipart_threshold = 1000;
  o.s3_part_size = 700;
  o.s3_read_ahead = 256;
  auto store = BlobStore::open(url(server), o);
  ASSERT_TRUE(store) << store.error().to_string();
  std::string big(2500, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  auto blob = store->put(Kind::motion, "bvh", core::as_bytes(big));
  ASSERT_TRUE(blob) << blob.error().to_string();
  EXPECT_EQ(s3.objects["/bucket/p/" + blob->key], big);
  EXPECT_EQ(s3.objects["/bucket/p/sha256/" + blob->sha256.substr(0, 2) + "/" + blob->sha256],
            blob->key);
  auto small = store->put(Kind::model, "vrm", core::as_bytes("tiny"));
  ASSERT_TRUE(small) << small.error().to_string();
  auto reader = store->open_blob(blob->key);
  ASSERT_TRUE(reader) << reader.error().to_string();
  EXPECT_EQ(reader->size(), big.size());
  std::vector<std::uint8_t> buf(600);
  auto n = reader->read_at(2000, buf);
  ASSERT_TRUE(n) << n.error().to_string();
  EXPECT_EQ(*n, 500u);
  EXPECT_EQ(std::string(buf.begin(), buf.begin() + 500), big.substr(2000));
  n = reader->read_at(100, std::span<std::uint8_t>(buf.data(), 10));  // a window of 256
  ASSERT_TRUE(n);
  EXPECT_EQ(std::string(buf.begin(), buf.begin() + 10), big.substr(100, 10));
  // A server that ignores Range: the start of the object is still right, the rest is refused.
  s3.ignore_range = true;
  auto fresh = store->open_blob(blob->key);
  ASSERT_TRUE(fresh);
  n = fresh->read_at(0, std::span<std::uint8_t>(buf.data(), 10));
  ASSERT_TRUE(n) << n.error().to_string();
  EXPECT_EQ(std::string(buf.begin(), buf.begin() + 10), big.substr(0, 10));
  n = fresh->read_at(1000, std::span<std::uint8_t>(buf.data(), 10));
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code, "STORE_S3_RESPONSE");
  s3.ignore_range = false;
  auto file = store->local_file(small->key);
  ASSERT_TRUE(file) << file.error().to_string();
  EXPECT_TRUE(file->temporary());
  ASSERT_TRUE(store->remove(blob->key));
  EXPECT_EQ(s3.objects.count("/bucket/p/" + blob->key), 0u);
  EXPECT_EQ(s3.objects.count("/bucket/p/sha256/" + blob->sha256.substr(0, 2) + "/" + blob->sha256),
            0u);
  EXPECT_EQ(s3.bad_hashes, 0);
}

TEST_F(S3StoreTest, AFailedMultipartUploadIsAbortedAndLeavesNothingLocal) {
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant);
    MemoryS3 s3;
    if (variant == 0) s3.fail_part = 2;
    if (variant == 1) s3.complete_with_error = true;
    FakeHttpServer server([&](const Request& r) { return s3.handle(r); });
    BlobStoreOptions o = options();
    o.s3_multipart_threshold = 100;
    o.s3_part_size = 100;
    auto store = BlobStore::open(url(server), o);
    ASSERT_TRUE(store) << store.error().to_string();
    auto blob = store->put(Kind::package, "zip", core::as_bytes(std::string(350, 'z')));
    ASSERT_FALSE(blob);
    EXPECT_EQ(blob.error().code, "STORE_S3_HTTP");
    EXPECT_NE(blob.error().message.find("InternalError"), std::string::npos)
        << blob.error().message;
    bool aborted = false;
    for (const Request& r : server.requests())
      if (r.method == "DELETE" && r.target.find("uploadId=U-1%262") != std::string::npos)
        aborted = true;
    EXPECT_TRUE(aborted);
    EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
  }
}

// A blob whose object PUT keeps failing with 503 (after the client's own
// retries): the error is transient, so a job may try again later, and the
// index entry written before the object is taken back: nothing is left.
TEST_F(S3StoreTest, AnObjectThatDoesNotArriveTakesItsIndexEntryBack) {
  MemoryS3 s3;
  s3.fail_object_puts = true;
  FakeHttpServer server([&](const Request& r) { return s3.handle(r); });
  BlobStoreOptions o = options();
  auto store = BlobStore::open(url(server), o);
  ASSERT_TRUE(store) << store.error().to_string();
  auto blob = store->put(Kind::motion, "bvh", core::as_bytes(std::string(300, 'm')));
  ASSERT_FALSE(blob);
  EXPECT_EQ(blob.error().code, "STORE_S3_HTTP");
  EXPECT_TRUE(is_transient(blob.error())) << blob.error().message;
  bool indexed = false;
  for (const Request& r : server.requests())
    indexed |= r.method == "PUT" && r.target.find("/sha256/") != std::string::npos;
  EXPECT_TRUE(indexed) << "the index entry comes first";
  std::lock_guard lock(s3.mutex);
  EXPECT_TRUE(s3.objects.empty()) << s3.objects.begin()->first;
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST(StoreErrors, TransientAreUnreachableOrUnavailable) {
  EXPECT_TRUE(is_transient(core::make_error(codes::STORE_S3_NETWORK, "PUT x: refused")));
  for (const char* status : {"500", "502", "503", "504"})
    EXPECT_TRUE(is_transient(
        core::make_error(codes::STORE_S3_HTTP, std::string("PUT k: HTTP ") + status + " X: y")))
        << status;
  for (const char* status : {"400", "403", "404", "409", "501"})
    EXPECT_FALSE(is_transient(
        core::make_error(codes::STORE_S3_HTTP, std::string("PUT k: HTTP ") + status + " X: y")))
        << status;
  EXPECT_FALSE(is_transient(core::make_error(codes::STORE_IO, "no space left: HTTP 503")));
  EXPECT_FALSE(is_transient(core::make_error(codes::STORE_S3_RESPONSE, "no ETag")));
}

TEST_F(S3StoreTest, DownloadsAreBoundedByTheLimit) {
  MemoryS3 s3;
  FakeHttpServer server([&](const Request& r) { return s3.handle(r); });
  auto store = BlobStore::open(url(server), options());
  ASSERT_TRUE(store) << store.error().to_string();
  auto blob = store->put(Kind::motion, "bvh", core::as_bytes(std::string(5000, 'b')));
  ASSERT_TRUE(blob) << blob.error().to_string();
  BlobStoreOptions small = options();
  small.max_bytes = 1000;
  auto limited = BlobStore::open(url(server), small);
  ASSERT_TRUE(limited);
  auto file = limited->local_file(blob->key);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code, "STORE_TOO_LARGE");
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
  auto missing = limited->local_file("motions/2026/03/aa/" + std::string(64, 'a') + ".bvh");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "STORE_NOT_FOUND");
}

}  // namespace
}  // namespace charkit::store
