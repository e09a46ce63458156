#include "charkit/store/detail/s3_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "charkit/store/error_codes.h"

namespace charkit::store::s3 {
namespace {

using core::make_error;

constexpr std::size_t kMaxErrorBody = 64 * 1024;
constexpr std::size_t kMaxPooledHandles = 16;

core::Error url_error(std::string_view url, std::string why) {
  return make_error(codes::STORE_S3_URL,
                    "bad S3 location '" + std::string(url) + "': " + std::move(why) +
                        " (expected s3://BUCKET/PREFIX?endpoint=URL&region=R)");
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

bool printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 127; });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// Endpoint "scheme://host[:port][/]" → (endpoint without the slash, Host header).
core::Result<std::pair<std::string, std::string>> parse_endpoint(std::string_view url,
                                                                 std::string_view e) {
  std::string_view rest;
  bool https = false;
  if (e.substr(0, 7) == "http://") {
    rest = e.substr(7);
  } else if (e.substr(0, 8) == "https://") {
    rest = e.substr(8);
    https = true;
  } else {
    return url_error(url, "the endpoint must start with http:// or https://");
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest.find_first_of("/?#@\\") != std::string_view::npos ||
      !printable_ascii(rest))
    return url_error(url, "the endpoint must be scheme://host[:port] without a path");
  std::string_view host = rest, port;
  if (rest.front() == '[') {  // [IPv6]:port
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return url_error(url, "unclosed '[' in the endpoint");
    host = rest.substr(0, close + 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return url_error(url, "bad endpoint port");
      port = rest.substr(close + 2);
    }
  } else if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return url_error(url, "the endpoint has no host");
  if (!port.empty() || rest.back() == ':') {
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(std::string(port)) > 65535 || std::stoi(std::string(port)) == 0)
      return url_error(url, "bad endpoint port");
  }
  const bool default_port = port.empty() || (https && port == "443") || (!https && port == "80");
  std::string host_header = lower(host);
  if (!default_port) host_header += ":" + std::string(port);
  return std::pair<std::string, std::string>((https ? "https://" : "http://") + host_header,
                                             host_header);
}

std::once_flag g_curl_init;

// ---- libcurl callbacks -------------------------------------------------------

struct Transfer {
  const Call* call = nullptr;
  std::size_t max_answer = 0;
  CURL* curl = nullptr;
  Response* res = nullptr;
  std::uint64_t sent = 0;  // bytes of the body handed to curl
  int read_errno = 0;
  bool answer_too_large = false;
};

long current_status(Transfer* t) {
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  const long status = current_status(t);
  Response& res = *t->res;
  const Call& call = *t->call;
  if (status >= 200 && status < 300 && call.use_into) {
    const std::size_t room = call.into.size() - static_cast<std::size_t>(res.received);
    const std::size_t take = std::min(room, n);
    std::memcpy(call.into.data() + res.received, data, take);
    res.received += take;
    if (take < n) {
      res.overflow = true;
      return 0;  // stop the transfer
    }
    return n;
  }
  if (status >= 200 && status < 300 && call.into_fd >= 0) {
    if (res.received + n > call.max_file_bytes) {
      res.overflow = true;
      return 0;
    }
    std::size_t done = 0;
    while (done < n) {
      const ssize_t w = ::write(call.into_fd, data + done, n - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        t->read_errno = errno;
        return 0;
      }
      done += static_cast<std::size_t>(w);
    }
    res.received += n;
    return n;
  }
  // Answers kept in memory: XML results (bounded) and error bodies (the
  // first 64 KiB are enough for Code and Message; the rest is dropped).
  const std::size_t limit = status >= 300 ? kMaxErrorBody : t->max_answer;
  if (res.body.size() + n > limit) {
    if (status >= 300) {
      res.body.append(data, limit - res.body.size());
      return n;
    }
    t->answer_too_large = true;
    return 0;
  }
  res.body.append(data, n);
  return n;
}

std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const Body& body = t->call->body;
  const std::uint64_t total = body.size();
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(size * count, total - t->sent));
  if (want == 0) return 0;
  if (body.fd < 0) {
    std::memcpy(buffer, body.memory.data() + t->sent, want);
    t->sent += want;
    return want;
  }
  while (true) {
    const ssize_t n = ::pread(body.fd, buffer, want, static_cast<off_t>(body.offset + t->sent));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      t->read_errno = n < 0 ? errno : EIO;
      return CURL_READFUNC_ABORT;
    }
    t->sent += static_cast<std::uint64_t>(n);
    return static_cast<std::size_t>(n);
  }
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  if (line.substr(0, 5) == "HTTP/") {  // a new answer (after 100 Continue, say)
    t->res->etag.clear();
    t->res->content_range.clear();
    t->res->content_length.reset();
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  const std::string name = lower(trim(line.substr(0, colon)));
  const std::string_view value = trim(line.substr(colon + 1));
  if (value.size() > 1024) return n;  // nothing we read is that long
  if (name == "etag") {
    t->res->etag = std::string(value);
  } else if (name == "content-range") {
    t->res->content_range = std::string(value);
  } else if (name == "content-length") {
    std::uint64_t v = 0;
    bool ok = !value.empty() && value.size() <= 19;
    for (char c : value) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (ok) t->res->content_length = v;
  }
  return n;
}

struct HeaderList {
  curl_slist* list = nullptr;
  ~HeaderList() { curl_slist_free_all(list); }
  bool add(const std::string& h) {
    curl_slist* next = curl_slist_append(list, h.c_str());
    if (!next) return false;
    list = next;
    return true;
  }
};

bool transient(long status) {
  return status == 500 || status == 502 || status == 503 || status == 504;
}

}  // namespace

bool is_s3_url(std::string_view location) {
  return location.substr(0, 5) == "s3://";
}

core::Result<Location> parse_url(std::string_view url) {
  if (!is_s3_url(url)) return url_error(url, "not an s3:// URL");
  std::string_view rest = url.substr(5);
  std::string_view query;
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.find('#') != std::string_view::npos) return url_error(url, "'#' is not allowed");
  Location loc;
  const auto slash = rest.find('/');
  loc.bucket = std::string(rest.substr(0, slash));
  std::string_view prefix = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (loc.bucket.size() < 3 || loc.bucket.size() > 63 ||
      !std::all_of(loc.bucket.begin(), loc.bucket.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
               c == '_' || (c >= 'A' && c <= 'Z');
      }))
    return url_error(url, "the bucket name must be 3-63 characters of a-z 0-9 . - _");
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  auto decoded_prefix = percent_decode(prefix);
  if (!decoded_prefix) return url_error(url, "bad %-escape in the prefix");
  loc.prefix = *decoded_prefix;
  if (loc.prefix.size() > 512) return url_error(url, "the prefix is too long");
  // Segments: no empty ones, no "." or "..", no control characters.
  if (!loc.prefix.empty()) {
    std::size_t start = 0;
    while (true) {
      const auto s = loc.prefix.find('/', start);
      const std::string_view seg =
          std::string_view(loc.prefix)
              .substr(start, s == std::string::npos ? std::string::npos : s - start);
      if (seg.empty() || seg == "." || seg == "..")
        return url_error(url, "empty, '.' or '..' segment in the prefix");
      if (s == std::string::npos) break;
      start = s + 1;
    }
    for (char c : loc.prefix)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\')
        return url_error(url, "control character or '\\' in the prefix");
  }
  std::string endpoint;
  bool have_region = false;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    auto value = percent_decode(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    if (!value) return url_error(url, "bad %-escape in '" + std::string(name) + "'");
    if (name == "endpoint") {
      endpoint = *value;
    } else if (name == "region") {
      if (value->empty() || value->size() > 64 ||
          !std::all_of(value->begin(), value->end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
          }))
        return url_error(url, "bad region '" + *value + "'");
      loc.region = *value;
      have_region = true;
    } else {
      return url_error(url, "unknown parameter '" + std::string(name) + "'");
    }
  }
  (void)have_region;
  if (endpoint.empty()) endpoint = "https://s3." + loc.region + ".amazonaws.com";
  auto ep = parse_endpoint(url, endpoint);
  if (!ep) return std::move(ep).error();
  loc.endpoint = std::move(ep->first);
  loc.host = std::move(ep->second);
  return loc;
}

core::Result<sigv4::Credentials> credentials_from_env() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  sigv4::Credentials c;
  c.access_key_id = env("AWS_ACCESS_KEY_ID");
  c.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
  c.session_token = env("AWS_SESSION_TOKEN");
  if (c.access_key_id.empty() || c.secret_access_key.empty())
    return make_error(codes::STORE_S3_CREDENTIALS,
                      "S3 storage needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the "
                      "environment (AWS_SESSION_TOKEN too for temporary credentials)");
  if (!printable_ascii(c.access_key_id) || !printable_ascii(c.secret_access_key) ||
      (!c.session_token.empty() && !printable_ascii(c.session_token)))
    return make_error(codes::STORE_S3_CREDENTIALS,
                      "the AWS credentials hold non-printable characters");
  return c;
}

Client::Client(Location location, sigv4::Credentials credentials, ClientOptions options)
    : location_(std::move(location)),
      credentials_(std::move(credentials)),
      options_(std::move(options)) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Client::~Client() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* Client::acquire() const {
  {
    std::lock_guard lock(pool_mutex_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void Client::release(void* handle) const {
  curl_easy_reset(static_cast<CURL*>(handle));
  std::lock_guard lock(pool_mutex_);
  if (pool_.size() < kMaxPooledHandles) {
    pool_.push_back(handle);
    return;
  }
  curl_easy_cleanup(static_cast<CURL*>(handle));
}

std::string Client::object_key(std::string_view key) const {
  if (location_.prefix.empty()) return std::string(key);
  return location_.prefix + "/" + std::string(key);
}

std::string Client::error_code(const Response& response) {
  auto doc = xml::parse(response.body);
  if (!doc || doc->name != "Error") return {};
  return doc->child_text("Code");
}

core::Error Client::http_error(const Response& response, std::string_view what) {
  std::string msg = std::string(what) + ": HTTP " + std::to_string(response.status);
  if (auto doc = xml::parse(response.body); doc && doc->name == "Error") {
    std::string code = doc->child_text("Code"), text = doc->child_text("Message");
    if (code.size() > 200) code.resize(200);
    if (text.size() > 500) text.resize(500);
    if (!code.empty()) msg += " " + code;
    if (!text.empty()) msg += ": " + text;
  }
  return make_error(codes::STORE_S3_HTTP, msg);
}

core::Result<Response> Client::send(const Call& call) const {
  const int attempts = call.repeatable ? std::max(1, options_.attempts) : 1;
  for (int attempt = 1;; ++attempt) {
    auto r = send_once(call);
    const bool again = attempt < attempts && ((!r && r.error().code == codes::STORE_S3_NETWORK) ||
                                              (r && transient(r->status)));
    if (!again) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << (2 * (attempt - 1))));
    // A file sink may hold part of the failed answer: start it over.
    if (call.into_fd >= 0 &&
        (::ftruncate(call.into_fd, 0) != 0 || ::lseek(call.into_fd, 0, SEEK_SET) != 0))
      return r;
  }
}

core::Result<Response> Client::send_once(const Call& call) const {
  CURL* curl = static_cast<CURL*>(acquire());
  if (!curl) return make_error(codes::STORE_S3_NETWORK, "curl_easy_init failed");
  struct Releaser {
    const Client* c;
    CURL* h;
    ~Releaser() { c->release(h); }
  } releaser{this, curl};

  const std::string path = "/" + location_.bucket + (call.key.empty() ? "" : "/" + call.key);
  const std::string query = sigv4::canonical_query(call.query);
  const std::string url =
      location_.endpoint + sigv4::uri_encode(path, true) + (query.empty() ? "" : "?" + query);
  const std::string date = sigv4::amz_date(std::chrono::system_clock::now());

  sigv4::Request req;
  req.method = call.method;
  req.path = path;
  req.query = call.query;
  req.payload_hash = call.payload_hash;
  req.headers = call.headers;
  req.headers.emplace_back("host", location_.host);
  req.headers.emplace_back("x-amz-date", date);
  req.headers.emplace_back("x-amz-content-sha256", call.payload_hash);
  if (!credentials_.session_token.empty())
    req.headers.emplace_back("x-amz-security-token", credentials_.session_token);
  const sigv4::Signature sig =
      sigv4::sign(req, credentials_, date, sigv4::Scope{location_.region, "s3"});

  HeaderList headers;
  bool ok = true;
  for (const auto& [name, value] : req.headers) ok = ok && headers.add(name + ": " + value);
  ok = ok && headers.add("Authorization: " + sig.authorization);
  ok = ok && headers.add("Expect:");  // no 100-continue round trip
  ok = ok && headers.add("Accept:");
  if (!ok) return make_error(codes::STORE_S3_NETWORK, "out of memory building the request headers");

  Response res;
  Transfer t;
  t.call = &call;
  t.curl = curl;
  t.res = &res;
  t.max_answer = options_.max_answer_bytes;

  const std::uint64_t body_size = call.body.size();
  const std::uint64_t payload =
      std::max<std::uint64_t>(body_size, call.use_into ? call.into.size() : call.max_file_bytes);
  const auto total_ms =
      options_.request_timeout.count() + static_cast<long long>(payload / (256 * 1024) * 1000);
  const long stall_s = static_cast<long>(
      std::max<long long>(1, std::min<long long>(30, options_.request_timeout.count() / 1000)));

  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(total_ms));
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, stall_s);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  if (call.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (call.method != "GET") {
    // Every other method sends a body (maybe empty) with its Content-Length.
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, call.method.c_str());
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
    curl_easy_setopt(curl, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(curl, CURLOPT_READDATA, &t);
  }

  const CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &res.status);
  if (rc != CURLE_OK) {
    if (res.overflow) return res;  // the caller decides (a range answered in full, say)
    if (t.answer_too_large)
      return make_error(codes::STORE_S3_RESPONSE,
                        call.method + " " + path + ": the answer exceeds " +
                            std::to_string(options_.max_answer_bytes) + " bytes");
    if (t.read_errno != 0)
      return make_error(codes::STORE_IO,
                        call.method + " " + path + ": local file: " + std::strerror(t.read_errno));
    return make_error(codes::STORE_S3_NETWORK, call.method + " " + location_.endpoint + path +
                                                   ": " + curl_easy_strerror(rc));
  }
  return res;
}

}  // namespace charkit::store::s3
