// WebSocket keypoint streaming and /metrics, end to end: a Server on
// 127.0.0.1:0 driven by a Beast WebSocket client. The expected frame values
// come from the motion's NDJSON text, read here with strtof (independent of
// the server's SAX reader), and frames are decoded by hand from the wire
// layout in docs/contracts/websocket-keypoints.md.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/server/detail/frame_source.h"
#include "charkit/server/detail/ws.h"
#include "charkit/server/live_publish.h"
#include "charkit/server/server.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using core::Json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::size_t kFrameBytes = 572;

using test_http::read_file;
using test_http::request;
using test_http::Response;

/// The HTTP status a WebSocket upgrade request gets when the server refuses it
/// before the handshake (Beast's client keeps no refused response for us).
unsigned upgrade_status(std::uint16_t port, const std::string& target,
                        const char* source = "127.0.0.1") {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.open(tcp::v4());
  sock.bind(tcp::endpoint(net::ip::make_address(source), 0));
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
  req.set(http::field::sec_websocket_version, "13");
  http::write(sock, req);
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  beast::error_code ec;
  http::read_header(sock, buf, parser, ec);
  return ec ? 0 : parser.get().result_int();
}

/// The decoded values of one frame (wire or NDJSON): frame, then 142 floats
/// (timeMs, 33×4 point values, 9 angles).
struct Values {
  std::uint32_t frame = 0;
  std::vector<float> f;
};

Values decode_wire(const std::string& b) {
  auto u32 = [&](std::size_t off) {
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[off + i]);
    return v;
  };
  Values v;
  v.frame = u32(0);
  for (std::size_t off = 4; off + 4 <= b.size(); off += 4) {
    std::uint32_t bits = u32(off);
    float x;
    std::memcpy(&x, &bits, 4);
    v.f.push_back(x);
  }
  return v;
}

/// Numbers of an NDJSON line in order (the keys hold no digits): frame, timeMs,
/// 132 point values, 9 angles; each text rounded once to float32 by strtof.
Values parse_line(const std::string& line) {
  Values v;
  std::vector<std::string> tokens;
  std::string cur;
  for (char c : line) {
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
      cur.push_back(c);
    } else {
      if (!cur.empty() && cur != "e" && cur != "E") tokens.push_back(cur);
      cur.clear();
    }
  }
  // "frame" and "timeMs" hold an 'e': the scan above keeps only tokens with a digit.
  std::vector<std::string> nums;
  for (auto& t : tokens)
    if (t.find_first_of("0123456789") != std::string::npos) nums.push_back(t);
  if (nums.empty()) return v;
  v.frame = static_cast<std::uint32_t>(std::strtoul(nums[0].c_str(), nullptr, 10));
  for (std::size_t i = 1; i < nums.size(); ++i)
    v.f.push_back(std::strtof(nums[i].c_str(), nullptr));
  return v;
}

struct Message {
  bool ok = false;
  bool timed_out = false;
  bool binary = false;
  std::string data;
  beast::error_code ec;
};

class WsClient {
 public:
  /// Handshake; returns the HTTP status of the answer (101 when upgraded).
  /// `source`: the client's own address (any 127.0.0.0/8 one: another client).
  unsigned connect(std::uint16_t port, const std::string& target, int rcvbuf = 0,
                   const char* source = "127.0.0.1") {
    auto& sock = beast::get_lowest_layer(ws_).socket();
    sock.open(tcp::v4());
    sock.bind(tcp::endpoint(net::ip::make_address(source), 0));
    if (rcvbuf > 0) sock.set_option(net::socket_base::receive_buffer_size(rcvbuf));
    sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    websocket::response_type res;
    beast::error_code ec;
    ws_.handshake(res, "127.0.0.1", target, ec);
    ws_.read_message_max(1 << 20);
    return res.result_int();
  }
  Message read(std::chrono::milliseconds timeout = 5000ms) {
    Message m;
    bool done = false;
    ws_.async_read(buf_, [&](beast::error_code ec, std::size_t) {
      m.ec = ec;
      done = true;
    });
    ioc_.restart();
    ioc_.run_for(timeout);
    if (!done) {
      m.timed_out = true;
      beast::get_lowest_layer(ws_).socket().cancel();
      ioc_.restart();
      ioc_.run_for(2000ms);
      return m;
    }
    m.ok = !m.ec;
    m.binary = ws_.got_binary();
    m.data = beast::buffers_to_string(buf_.data());
    buf_.consume(buf_.size());
    return m;
  }
  void text(const std::string& s) {
    ws_.text(true);
    ws_.write(net::buffer(s));
  }
  void binary(const std::string& s) {
    ws_.binary(true);
    ws_.write(net::buffer(s));
  }
  /// Bytes written to the connection as they are (hand-made frames).
  void raw(const std::string& bytes) {
    net::write(beast::get_lowest_layer(ws_).socket(), net::buffer(bytes));
  }
  websocket::close_reason reason() const { return ws_.reason(); }
  /// Reads until the server's close arrives; the close code (0 if none came).
  unsigned wait_close() {
    for (int i = 0; i < 2000; ++i) {
      auto m = read();
      if (m.timed_out) return 0;
      if (!m.ok) return m.ec == websocket::error::closed ? ws_.reason().code : 0;
    }
    return 0;
  }

 private:
  net::io_context ioc_;
  websocket::stream<beast::tcp_stream> ws_{ioc_};
  beast::flat_buffer buf_;
};

/// Sample lines "name{labels} value" (comments skipped); a malformed line fails the test.
bool sample_line(const std::string& line, std::string& key, double& value) {
  auto sp = line.rfind(' ');
  if (sp == std::string::npos || sp == 0) return false;
  key = line.substr(0, sp);
  const std::string num = line.substr(sp + 1);
  char* end = nullptr;
  value = std::strtod(num.c_str(), &end);
  if (num.empty() || end != num.c_str() + num.size()) return false;
  auto brace = key.find('{');
  const std::string name = key.substr(0, brace);
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':')) return false;
  return brace == std::string::npos || key.back() == '}';
}

std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string key;
    double v = 0;
    EXPECT_TRUE(sample_line(line, key, v)) << "not a sample line: " << line;
    out[key] = v;
  }
  return out;
}

class WsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_ws_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    auto t = start_test_server(dir_);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    server_ = std::move(t->server);
    port_ = t->port;
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Json wait_for(const std::string& url) {
    // A deadline, not a count of polls (a loaded machine under ASan is slow).
    Json j;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    do {
      j = request(port_, http::verb::get, url).json();
      std::string s = j.value("preprocessState", "");
      if (s != "pending" && s != "running") return j;
      std::this_thread::sleep_for(25ms);
    } while (std::chrono::steady_clock::now() < deadline);
    return j;
  }
  /// Uploads the test BVH, waits for preprocessing; returns the id and fills lines_.
  std::int64_t bvh_motion() {
    std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
    auto r = request(port_, http::verb::post, "/api/motions?filename=walk.bvh", bvh);
    EXPECT_EQ(r.status, 201u) << r.body;
    std::int64_t id = r.json()["id"];
    Json m = wait_for("/api/motions/" + std::to_string(id));
    EXPECT_EQ(m["preprocessState"], "done") << m.dump();
    fps_ = m["fps"].get<double>();
    auto nd =
        request(port_, http::verb::get, "/api/motions/" + std::to_string(id) + "/keypoints.ndjson");
    EXPECT_EQ(nd.status, 200u);
    std::istringstream in(nd.body);
    std::string line;
    lines_.clear();
    while (std::getline(in, line))
      if (!line.empty()) lines_.push_back(parse_line(line));
    return id;
  }
  std::map<std::string, double> metrics() {
    auto r = request(port_, http::verb::get, "/metrics");
    EXPECT_EQ(r.status, 200u);
    return parse_metrics(r.body);
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
  std::vector<Values> lines_;
  double fps_ = 0;
};

TEST_F(WsTest, MetricsExpositionAndCountersMove) {
  auto r = request(port_, http::verb::get, "/metrics");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  for (std::string name : {"charkit_http_requests_total", "charkit_http_request_bytes_total",
                           "charkit_http_response_bytes_total", "charkit_jobs",
                           "charkit_stream_clients", "charkit_uploads_in_flight"}) {
    EXPECT_NE(r.body.find("# HELP " + name + " "), std::string::npos) << name;
    EXPECT_NE(r.body.find("# TYPE " + name + " "), std::string::npos) << name;
  }
  EXPECT_NE(r.body.find("# TYPE charkit_http_requests_total counter"), std::string::npos);
  EXPECT_NE(r.body.find("# TYPE charkit_jobs gauge"), std::string::npos);
  auto m0 = parse_metrics(r.body);
  const std::string get200 = "charkit_http_requests_total{method=\"GET\",code=\"200\"}";
  const double before = m0.count(get200) ? m0[get200] : 0;
  EXPECT_EQ(m0["charkit_uploads_in_flight"], 0);
  EXPECT_EQ(m0["charkit_stream_clients"], 0);
  EXPECT_EQ(m0["charkit_jobs{state=\"pending\"}"] + m0["charkit_jobs{state=\"running\"}"], 0);

  const std::string body = "{\"not keypoints\": 1}";
  ASSERT_EQ(request(port_, http::verb::post, "/api/motions?filename=a.json", body).status, 201u);
  EXPECT_EQ(request(port_, http::verb::get, "/nope").status, 404u);
  EXPECT_EQ(request(port_, http::verb::get, "/healthz").status, 200u);
  // The count is taken when a response is written: poll briefly.
  std::map<std::string, double> m1;
  for (int i = 0; i < 100; ++i) {
    m1 = metrics();
    if (m1[get200] >= before + 2 &&
        m1.count("charkit_http_requests_total{method=\"POST\",code=\"201\"}") &&
        m1.count("charkit_http_requests_total{method=\"GET\",code=\"404\"}"))
      break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_GE(m1[get200], before + 2);  // the first /metrics and /healthz at least
  EXPECT_EQ(m1["charkit_http_requests_total{method=\"POST\",code=\"201\"}"], 1);
  EXPECT_EQ(m1["charkit_http_requests_total{method=\"GET\",code=\"404\"}"], 1);
  EXPECT_GE(m1["charkit_http_request_bytes_total"] - m0["charkit_http_request_bytes_total"],
            static_cast<double>(body.size()));
  EXPECT_GE(m1["charkit_http_response_bytes_total"] - m0["charkit_http_response_bytes_total"],
            static_cast<double>(r.body.size()));
  double jobs = 0;
  for (auto s : {"pending", "running", "done", "failed"})
    jobs += m1["charkit_jobs{state=\"" + std::string(s) + "\"}"];
  EXPECT_EQ(jobs, 1);  // the upload's preprocessing job, in some state
}

TEST_F(WsTest, MotionStreamHeaderThenFramesEqualNdjson) {
  auto id = bvh_motion();
  ASSERT_GT(lines_.size(), 10u);
  WsClient c;
  ASSERT_EQ(c.connect(port_, "/api/motions/" + std::to_string(id) + "/stream"), 101u);
  auto h = c.read();
  ASSERT_TRUE(h.ok);
  ASSERT_FALSE(h.binary);
  Json header = Json::parse(h.data);
  EXPECT_EQ(header["format"], "mediapipe33@0.1.0");
  EXPECT_EQ(header["encoding"], "f32le-frame-v1");
  EXPECT_EQ(header["frames"], lines_.size());
  EXPECT_EQ(header["fps"].get<double>(), fps_);
  EXPECT_EQ(header["frameBytes"], 572);
  EXPECT_GE(metrics()["charkit_stream_clients"], 1);

  std::vector<std::uint32_t> got;
  auto first = std::chrono::steady_clock::now(), last = first;
  for (int i = 0; i < 1000; ++i) {
    auto m = c.read();
    ASSERT_TRUE(m.ok) << m.ec.message();
    if (!m.binary) {
      Json s = Json::parse(m.data);
      ASSERT_EQ(s["type"], "status");
      if (s["state"] == "ended") break;
      continue;
    }
    ASSERT_EQ(m.data.size(), kFrameBytes);
    Values v = decode_wire(m.data);
    ASSERT_LT(v.frame, lines_.size());
    const Values& want = lines_[v.frame];
    ASSERT_EQ(want.f.size(), 142u);
    ASSERT_EQ(v.f.size(), 142u);
    for (std::size_t k = 0; k < 142; ++k)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(v.f[k]), std::bit_cast<std::uint32_t>(want.f[k]))
          << "frame " << v.frame << " value " << k << ": " << v.f[k] << " vs " << want.f[k];
    if (got.empty()) first = std::chrono::steady_clock::now();
    last = std::chrono::steady_clock::now();
    if (!got.empty()) {
      ASSERT_GT(v.frame, got.back());
    }
    got.push_back(v.frame);
  }
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.front(), 0u);
  EXPECT_EQ(got.back(), lines_.size() - 1);
  EXPECT_GE(got.size(), lines_.size() / 2);  // a loaded machine may skip a few late frames
  // Paced at the motion's fps: frame 0 to the last takes (n-1)/fps seconds.
  const double expect_s = static_cast<double>(lines_.size() - 1) / fps_;
  const double took_s = std::chrono::duration<double>(last - first).count();
  EXPECT_GT(took_s, expect_s * 0.8);
  EXPECT_LT(took_s, expect_s + 1.0);
}

TEST_F(WsTest, PauseSeekSpeedLoop) {
  auto id = bvh_motion();
  WsClient c;
  ASSERT_EQ(c.connect(port_, "/api/motions/" + std::to_string(id) + "/stream"), 101u);
  ASSERT_TRUE(c.read().ok);  // header
  c.text("pause");
  Json st;
  for (int i = 0; i < 200; ++i) {
    auto m = c.read();
    ASSERT_TRUE(m.ok);
    if (!m.binary) {
      st = Json::parse(m.data);
      break;
    }
  }
  EXPECT_EQ(st["state"], "paused");
  c.text("seek 10");
  auto f = c.read();
  ASSERT_TRUE(f.ok);
  ASSERT_TRUE(f.binary);
  EXPECT_EQ(decode_wire(f.data).frame, 10u);
  auto s2 = c.read();
  ASSERT_TRUE(s2.ok);
  EXPECT_EQ(Json::parse(s2.data)["frame"], 10);
  c.text("{\"cmd\":\"speed\",\"factor\":2}");
  auto s3 = Json::parse(c.read().data);
  EXPECT_EQ(s3["speed"], 2.0);
  EXPECT_EQ(s3["state"], "paused");
  c.text("loop on");
  EXPECT_EQ(Json::parse(c.read().data)["loop"], true);
  c.text("play");
  EXPECT_EQ(Json::parse(c.read().data)["state"], "playing");
  // At 2× and looping: frames after 10 arrive, wrap to 0 and keep going.
  std::vector<std::uint32_t> frames;
  auto t0 = std::chrono::steady_clock::now();
  bool wrapped = false;
  while (std::chrono::steady_clock::now() - t0 < 6s && !wrapped) {
    auto m = c.read();
    ASSERT_TRUE(m.ok);
    if (!m.binary) continue;
    auto fr = decode_wire(m.data).frame;
    if (!frames.empty() && fr < frames.back()) wrapped = true;
    frames.push_back(fr);
  }
  ASSERT_FALSE(frames.empty());
  EXPECT_GT(frames.front(), 10u);
  EXPECT_TRUE(wrapped);
  // 2×: the remaining frames (10..n-1) take about (n-11)/(2·fps) s.
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, static_cast<double>(lines_.size()) / fps_);
  // Paused: nothing more after the status.
  c.text("pause");
  for (int i = 0; i < 200; ++i) {
    auto m = c.read();
    ASSERT_TRUE(m.ok);
    if (!m.binary) break;
  }
  auto quiet = c.read(400ms);
  EXPECT_TRUE(quiet.timed_out);
}

TEST_F(WsTest, SlowClientSkipsFramesQueueBounded) {
  auto id = bvh_motion();
  WsClient c;
  // A small receive window: the server's writes stall while we do not read.
  ASSERT_EQ(c.connect(port_, "/api/motions/" + std::to_string(id) + "/stream", 4096), 101u);
  c.text("speed 16");
  c.text("loop on");
  std::this_thread::sleep_for(3s);  // not reading
  auto m = metrics();
  EXPECT_GT(m["charkit_stream_frames_skipped_total"], 0);
  EXPECT_LE(m["charkit_stream_queue_max"], 1);
  EXPECT_EQ(m["charkit_stream_queue_max"], 1);
  c.text("pause");
  std::size_t received = 0;
  Json st;
  for (int i = 0; i < 100000; ++i) {
    auto r = c.read();
    ASSERT_TRUE(r.ok);
    if (r.binary) {
      ++received;
      continue;
    }
    Json j = Json::parse(r.data);
    if (j["type"] == "status" && j["state"] == "paused") {
      st = j;
      break;
    }
  }
  ASSERT_TRUE(st.is_object());
  const auto sent = st["sent"].get<std::uint64_t>();
  const auto skipped = st["skipped"].get<std::uint64_t>();
  EXPECT_GT(skipped, 0u);
  // About 3 s × 30 fps × 16 frames were due; far fewer reached us.
  EXPECT_LT(received, sent + skipped);
  EXPECT_LT(received, 3u * 30u * 16u / 2u);
  EXPECT_LE(metrics()["charkit_stream_queue_max"], 1);
}

TEST_F(WsTest, MalformedClientMessagesClose) {
  auto id = bvh_motion();
  const std::string target = "/api/motions/" + std::to_string(id) + "/stream";
  {
    WsClient c;
    ASSERT_EQ(c.connect(port_, target), 101u);
    c.binary("xyz");
    EXPECT_EQ(c.wait_close(), 1003u);
  }
  {
    WsClient c;
    ASSERT_EQ(c.connect(port_, target), 101u);
    c.text("dance");
    EXPECT_EQ(c.wait_close(), 1008u);
    const std::string why(c.reason().reason.data(), c.reason().reason.size());
    EXPECT_NE(why.find("unknown command"), std::string::npos) << why;
  }
  {
    WsClient c;
    ASSERT_EQ(c.connect(port_, target), 101u);
    c.text("seek 99999");
    EXPECT_EQ(c.wait_close(), 1008u);
  }
  {
    WsClient c;
    ASSERT_EQ(c.connect(port_, target), 101u);
    c.text("{\"cmd\":");
    EXPECT_EQ(c.wait_close(), 1008u);
  }
  {
    WsClient c;
    ASSERT_EQ(c.connect(port_, target), 101u);
    c.text(std::string(5000, 'a'));  // over the 4 KiB message limit
    EXPECT_EQ(c.wait_close(), 1009u);
  }
  // RFC 6455 §5.2: a 64-bit length with its top bit set is no length at
  // all (1002 protocol error); a possible length over the limit is 1009.
  // Frames built by hand: FIN + binary, MASK + 127, eight length bytes, a
  // mask key; sent whole and split byte by byte.
  for (bool split : {false, true}) {
    for (auto [top, code] : {std::pair<unsigned char, unsigned>{0x80, 1002u},
                             {0xFF, 1002u},
                             {0x00, 1009u},
                             {0x7F, 1009u}}) {
      WsClient c;
      ASSERT_EQ(c.connect(port_, target), 101u);
      ASSERT_TRUE(c.read().ok);  // the header
      std::string frame = {'\x82', '\xFF', static_cast<char>(top),
                           '\0',   '\0',   '\x01',
                           '\0',   '\0',   '\0',
                           '\0',   'k',    'e',
                           'y',    '!'};
      if (split)
        for (char b : frame) c.raw(std::string(1, b));
      else
        c.raw(frame);
      EXPECT_EQ(c.wait_close(), code) << "top byte " << int(top) << (split ? " split" : "");
    }
  }
  // Not a WebSocket request, a bad id, a motion that is not done.
  EXPECT_EQ(request(port_, http::verb::get, target).status, 426u);
  EXPECT_EQ(upgrade_status(port_, "/api/motions/999/stream"), 404u);
  EXPECT_EQ(upgrade_status(port_, target), 101u);
  auto r = request(port_, http::verb::post, "/api/motions?filename=x.json", "{\"a\":1}");
  std::int64_t failed = r.json()["id"];
  EXPECT_EQ(wait_for("/api/motions/" + std::to_string(failed))["preprocessState"], "failed");
  EXPECT_EQ(upgrade_status(port_, "/api/motions/" + std::to_string(failed) + "/stream"), 409u);
}

std::string make_frame(std::uint32_t n, float base) {
  std::string b;
  auto put = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(n);
  for (int i = 0; i < 142; ++i) put(std::bit_cast<std::uint32_t>(base + static_cast<float>(i)));
  return b;
}

TEST_F(WsTest, LivePublishTwoViewersIdenticalBytes) {
  WsClient pub, v1, v2;
  ASSERT_EQ(pub.connect(port_, "/api/live/cam_1?role=publish"), 101u);
  ASSERT_EQ(v1.connect(port_, "/api/live/cam_1?role=view"), 101u);
  ASSERT_EQ(v2.connect(port_, "/api/live/cam_1?role=view"), 101u);
  for (WsClient* c : {&pub, &v1, &v2}) {
    auto h = c->read();
    ASSERT_TRUE(h.ok);
    Json j = Json::parse(h.data);
    EXPECT_EQ(j["mode"], "live");
    EXPECT_EQ(j["channel"], "cam_1");
  }
  EXPECT_EQ(metrics()["charkit_stream_clients"], 3);
  EXPECT_EQ(upgrade_status(port_, "/api/live/cam_1?role=publish"), 409u);
  std::vector<std::string> sent;
  for (std::uint32_t i = 0; i < 5; ++i) {
    sent.push_back(make_frame(i, 0.25f * static_cast<float>(i)));
    pub.binary(sent.back());
    std::this_thread::sleep_for(60ms);  // viewers keep up: nothing is skipped
  }
  for (WsClient* c : {&v1, &v2})
    for (std::size_t i = 0; i < sent.size(); ++i) {
      auto m = c->read();
      ASSERT_TRUE(m.ok);
      ASSERT_TRUE(m.binary);
      EXPECT_EQ(m.data, sent[i]);
    }
  // A viewer must not send.
  v2.text("hello");
  EXPECT_EQ(v2.wait_close(), 1008u);
}

// Viewers hear the publisher come and go; GET /api/live lists the channels
// open now with their publisher and viewers.
TEST_F(WsTest, LiveViewersHearThePublisherComeAndLeave) {
  auto channels = [&] {
    auto r = request(port_, http::verb::get, "/api/live");
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.json()["channels"];
  };
  EXPECT_EQ(channels(), Json::array());
  WsClient v;
  ASSERT_EQ(v.connect(port_, "/api/live/cam_2?role=view"), 101u);
  auto h = v.read();
  ASSERT_TRUE(h.ok);
  EXPECT_EQ(Json::parse(h.data)["publishing"], false) << h.data;
  EXPECT_EQ(channels(), Json::parse(R"([{"name":"cam_2","publishing":false,"viewers":1}])"));
  WsClient late;
  {
    WsClient pub;
    ASSERT_EQ(pub.connect(port_, "/api/live/cam_2?role=publish"), 101u);
    ASSERT_TRUE(pub.read().ok);  // its header
    auto came = v.read();
    ASSERT_TRUE(came.ok);
    EXPECT_FALSE(came.binary);
    EXPECT_EQ(Json::parse(came.data),
              Json::parse(R"({"type":"status","state":"live","channel":"cam_2"})"));
    EXPECT_EQ(channels(), Json::parse(R"([{"name":"cam_2","publishing":true,"viewers":1}])"));
    const std::string frame = make_frame(0, 1.0f);
    pub.binary(frame);
    auto f = v.read();
    ASSERT_TRUE(f.ok);
    EXPECT_TRUE(f.binary);
    EXPECT_EQ(f.data, frame);
    // a viewer coming while the publisher is there
    ASSERT_EQ(late.connect(port_, "/api/live/cam_2?role=view"), 101u);
    auto lh = late.read();
    ASSERT_TRUE(lh.ok);
    EXPECT_EQ(Json::parse(lh.data)["publishing"], true) << lh.data;
  }  // the publisher's connection drops
  auto left = v.read();
  ASSERT_TRUE(left.ok);
  EXPECT_EQ(Json::parse(left.data),
            Json::parse(R"({"type":"status","state":"publisher-left","channel":"cam_2"})"));
  auto late_left = late.read();
  ASSERT_TRUE(late_left.ok);
  EXPECT_EQ(Json::parse(late_left.data)["state"], "publisher-left");
  EXPECT_EQ(channels(), Json::parse(R"([{"name":"cam_2","publishing":false,"viewers":2}])"));
}

// `charkit live publish`'s client: a stored motion's frames reach a viewer
// byte for byte as the server streams them, at the rate asked; a busy
// channel is refused with the server's answer; stop closes normally.
TEST_F(WsTest, PublishLiveSendsTheMotionsFramesToViewers) {
  const std::int64_t id = bvh_motion();
  auto nd =
      request(port_, http::verb::get, "/api/motions/" + std::to_string(id) + "/keypoints.ndjson");
  ASSERT_EQ(nd.status, 200u);
  server::LivePublishOptions o;
  o.server = "http://127.0.0.1:" + std::to_string(port_);
  o.channel = "cli_cam";
  WsClient v;
  ASSERT_EQ(v.connect(port_, "/api/live/cli_cam?role=view"), 101u);
  ASSERT_TRUE(v.read().ok);  // the header
  auto stored = server::fetch_stored_motion(o, id);
  ASSERT_TRUE(stored.ok()) << stored.error().to_string();
  EXPECT_EQ(stored->keypoints, nd.body);
  EXPECT_EQ(stored->fps, fps_);
  EXPECT_EQ(stored->name, "walk.bvh");
  core::Result<server::LivePublishStats> stats = core::make_error(codes::LIVE_CLOSED, "not run");
  std::thread publisher([&] { stats = server::publish_live(nd.body, 120.0, o); });
  auto live = v.read();
  ASSERT_TRUE(live.ok);
  EXPECT_EQ(Json::parse(live.data)["state"], "live");
  // Each frame as the server encodes the stored motion's lines for its own
  // streams; a viewer may skip frames when it falls behind (latest wins,
  // contracts/websocket-keypoints.md §5), never reorder or alter them, and
  // the last frame always arrives.
  auto source = ws::FrameSource::open(
      [&](std::uint64_t at, std::span<std::uint8_t> out) -> core::Result<std::size_t> {
        const std::size_t n =
            at >= nd.body.size() ? 0 : std::min<std::size_t>(out.size(), nd.body.size() - at);
        std::copy_n(nd.body.data() + at, n, out.data());
        return n;
      },
      nd.body.size(), fps_);
  ASSERT_TRUE(source.ok());
  auto expected = (*source)->read(0, lines_.size());
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(expected->size(), lines_.size());
  std::int64_t last = -1;
  std::size_t received = 0;
  for (;;) {
    auto m = v.read();
    ASSERT_TRUE(m.ok);
    if (!m.binary) {
      EXPECT_EQ(Json::parse(m.data)["state"], "publisher-left") << m.data;
      break;
    }
    ASSERT_EQ(m.data.size(), 572u);
    std::uint32_t frame = 0;
    std::memcpy(&frame, m.data.data(), 4);
    ASSERT_LT(frame, expected->size());
    EXPECT_GT(static_cast<std::int64_t>(frame), last) << "frames arrive in order";
    EXPECT_EQ(m.data, *(*expected)[frame]) << "frame " << frame;
    last = frame;
    ++received;
  }
  EXPECT_EQ(last, static_cast<std::int64_t>(lines_.size()) - 1) << "the last frame arrives";
  EXPECT_GT(received, 0u);
  publisher.join();
  ASSERT_TRUE(stats.ok()) << stats.error().to_string();
  EXPECT_EQ(stats->frames_sent, lines_.size());
  EXPECT_EQ(stats->frames, lines_.size());
  EXPECT_FALSE(stats->stopped);
  // At 120 fps the last frame is due (n - 1) / 120 s after the first.
  EXPECT_GE(stats->seconds, static_cast<double>(lines_.size() - 1) / 120.0 - 0.01);

  // A channel with a publisher: refused with the server's answer.
  WsClient other;
  ASSERT_EQ(other.connect(port_, "/api/live/cli_cam?role=publish"), 101u);
  auto busy = server::publish_live(nd.body, 30.0, o);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code, codes::LIVE_REFUSED);
  EXPECT_NE(busy.error().message.find("409 CHANNEL_BUSY"), std::string::npos)
      << busy.error().message;

  // --loop until stopped: more frames than the motion has, then a normal close.
  std::atomic<bool> stop{false};
  o.channel = "cli_loop";
  o.loop = true;
  o.stop = &stop;
  const std::uint64_t want = lines_.size() + 10;
  o.progress = [&](std::uint64_t sent, std::size_t) {
    if (sent == want) stop = true;
  };
  auto looped = server::publish_live(nd.body, 1000.0, o);
  ASSERT_TRUE(looped.ok()) << looped.error().to_string();
  EXPECT_TRUE(looped->stopped);
  EXPECT_EQ(looped->frames_sent, want);

  // What is checked before connecting.
  o.server = "https://127.0.0.1:1";
  EXPECT_EQ(server::publish_live(nd.body, 30.0, o).error().code, codes::LIVE_URL);
  o.server = "http://127.0.0.1:" + std::to_string(port_);
  o.channel = "no spaces";
  EXPECT_EQ(server::publish_live(nd.body, 30.0, o).error().code, codes::BAD_CHANNEL);
  o.channel = "ok";
  EXPECT_EQ(server::publish_live(nd.body, 0.0, o).error().code, codes::KEYPOINTS_FPS);
  EXPECT_EQ(server::fetch_stored_motion(o, 999).error().code, codes::LIVE_REFUSED);
}

// The guard follows frame boundaries: a normal masked frame (16-bit length)
// passes untouched, then a 64-bit length with its top bit set is zeroed.
TEST(FrameLengthGuard, FollowsFramesAndZeroesImpossibleLengths) {
  std::string bytes = {'\x82', '\xFE', '\x00', '\x80', 'm', 'a', 's', 'k'};
  bytes += std::string(128, '\xFF');  // the payload: 0xFF bytes that look like headers
  const std::string good = bytes;
  bytes += std::string{'\x81', '\xFF', '\x80', '\x01', '\x02', '\x03', '\x04',
                       '\x05', '\x06', '\x07', 'k',    'e',    'y',    '!'};
  ws::FrameLengthGuard g;
  std::string out = bytes;
  // In uneven pieces, as reads deliver them.
  std::size_t at = 0;
  for (std::size_t piece : {3u, 1u, 200u}) {
    const std::size_t k = std::min(piece, out.size() - at);
    g.feed(reinterpret_cast<unsigned char*>(out.data() + at), k);
    at += k;
  }
  EXPECT_TRUE(g.tripped());
  EXPECT_EQ(out.substr(0, good.size()), good);
  EXPECT_EQ(out.substr(good.size(), 2), bytes.substr(good.size(), 2));
  EXPECT_EQ(out.substr(good.size() + 2, 8), std::string(8, '\0'));
  EXPECT_EQ(out.substr(good.size() + 10), "key!");
  // A possible 64-bit length is left as it is.
  ws::FrameLengthGuard h;
  std::string fine = {'\x82', '\xFF', '\x7F', '\0', '\0', '\0', '\0', '\0', '\0', '\0'};
  const std::string before = fine;
  h.feed(reinterpret_cast<unsigned char*>(fine.data()), fine.size());
  EXPECT_FALSE(h.tripped());
  EXPECT_EQ(fine, before);
}

// Viewers waiting on channels never use up the channels publishers need, and
// one owner (here, without tokens: one client address) is bounded on both.
TEST_F(WsTest, ViewersCannotSquatTheChannelsPublishersNeed) {
  std::vector<std::unique_ptr<WsClient>> held;
  auto open = [&](const std::string& target, const char* source) {
    held.push_back(std::make_unique<WsClient>());
    return held.back()->connect(port_, target, 0, source);
  };
  for (std::size_t i = 0; i < ws::kMaxWaitingChannelsPerOwner; ++i)
    ASSERT_EQ(open("/api/live/w" + std::to_string(i) + "?role=view", "127.0.0.2"), 101u) << i;
  // That viewer's next waiting channel is refused; joining an existing one is not.
  EXPECT_EQ(upgrade_status(port_, "/api/live/wx?role=view", "127.0.0.2"), 503u);
  EXPECT_EQ(open("/api/live/w0?role=view", "127.0.0.2"), 101u);
  // Another client may still wait on channels of its own.
  EXPECT_EQ(open("/api/live/wx?role=view", "127.0.0.3"), 101u);
  // Publishers are not affected: a new channel, and a channel viewers wait on.
  ASSERT_EQ(open("/api/live/p0?role=publish", "127.0.0.4"), 101u);
  ASSERT_EQ(open("/api/live/w1?role=publish", "127.0.0.4"), 101u);
  // One owner publishes at most kMaxChannelsPerOwner channels; others still can.
  for (std::size_t i = 2; i < ws::kMaxChannelsPerOwner; ++i)
    ASSERT_EQ(open("/api/live/p" + std::to_string(i) + "?role=publish", "127.0.0.4"), 101u) << i;
  EXPECT_EQ(upgrade_status(port_, "/api/live/px?role=publish", "127.0.0.4"), 503u);
  EXPECT_EQ(open("/api/live/px?role=publish", "127.0.0.5"), 101u);
}

TEST_F(WsTest, LiveRefusesBadFramesAndNames) {
  {
    WsClient pub;
    ASSERT_EQ(pub.connect(port_, "/api/live/a?role=publish"), 101u);
    ASSERT_TRUE(pub.read().ok);
    pub.binary(std::string(571, '\0'));
    EXPECT_EQ(pub.wait_close(), 1007u);
  }
  {
    WsClient pub;
    ASSERT_EQ(pub.connect(port_, "/api/live/a?role=publish"), 101u);
    ASSERT_TRUE(pub.read().ok);
    std::string f = make_frame(0, 1.0f);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto bits = std::bit_cast<std::uint32_t>(nan);
    for (int i = 0; i < 4; ++i) f[8 + 4 * 7 + i] = static_cast<char>((bits >> (8 * i)) & 0xff);
    pub.binary(f);
    EXPECT_EQ(pub.wait_close(), 1007u);
  }
  {
    WsClient pub;
    ASSERT_EQ(pub.connect(port_, "/api/live/a?role=publish"), 101u);
    ASSERT_TRUE(pub.read().ok);
    pub.text("hi");
    EXPECT_EQ(pub.wait_close(), 1003u);
  }
  EXPECT_EQ(upgrade_status(port_, "/api/live/a.b?role=view"), 400u);
  EXPECT_EQ(upgrade_status(port_, "/api/live/" + std::string(65, 'x') + "?role=view"), 400u);
  EXPECT_EQ(upgrade_status(port_, "/api/live/" + std::string(64, 'x') + "?role=view"), 101u);
  EXPECT_EQ(upgrade_status(port_, "/api/live/a"), 400u);
}

// The console's drivers playground (docs/api.md §Drivers playground) on the
// drivers example: the header describes the drivers, the frames follow the
// §13 rules (pingpong w from the phase, tick = round(w·100), the preview's
// morph weight tick / 100, the phase advancing by 0.5 Hz × speed per 1/30 s
// step), controls apply, a bad control is answered without closing, and an
// idle playground sends nothing.
TEST_F(WsTest, DriversPlaygroundRunsTheRuntime) {
  auto upload = [&](const std::string& file) {
    auto r = request(port_, http::verb::post, "/api/packages?filename=" + file,
                     read_file(kData / "examples" / file));
    EXPECT_EQ(r.status, 201u) << r.body;
    const std::string url = "/api/packages/" + std::to_string(r.json()["id"].get<std::int64_t>());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (request(port_, http::verb::get, url).json().value("validity", "") == "unknown" &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(25ms);
    EXPECT_EQ(request(port_, http::verb::get, url).json()["validity"], "valid");
    return url;
  };
  const std::string url = upload("example-1.5-drivers.bem");
  const std::string plain = upload("example-1.5.bem");
  EXPECT_EQ(upgrade_status(port_, plain + "/drivers"), 422u);  // NO_DRIVERS
  EXPECT_EQ(upgrade_status(port_, "/api/packages/999/drivers"), 404u);
  EXPECT_EQ(upgrade_status(port_, url + "/drivers?options=%26%26"), 400u);
  EXPECT_EQ(request(port_, http::verb::get, url + "/drivers").status, 426u);

  // The preview GLB with the channel as a morph target (targets=1).
  auto glb = request(port_, http::verb::get, url + "/export.glb?targets=1");
  ASSERT_EQ(glb.status, 200u) << glb.body;
  std::uint32_t json_len = 0;
  std::memcpy(&json_len, glb.body.data() + 12, 4);
  Json doc = Json::parse(glb.body.substr(20, json_len));
  ASSERT_EQ(doc["meshes"].size(), 1u);
  EXPECT_EQ(doc["meshes"][0]["primitives"][0]["targets"].size(), 1u) << doc["meshes"].dump();
  EXPECT_EQ(request(port_, http::verb::get, url + "/export.glb?targets=2").status, 400u);

  WsClient c;
  ASSERT_EQ(c.connect(port_, url + "/drivers"), 101u);
  auto next = [&] {
    auto m = c.read();
    if (!m.ok) return Json();
    EXPECT_FALSE(m.binary);
    return Json::parse(m.data);
  };
  Json header = next();
  ASSERT_EQ(header["type"], "drivers") << header.dump();
  ASSERT_EQ(header["drivers"].size(), 3u);
  EXPECT_EQ(header["fps"], 30.0);
  const Json& wave = header["drivers"][0];
  EXPECT_EQ(wave["id"], "wave");
  EXPECT_EQ(wave["waveform"], "pingpong");
  ASSERT_EQ(wave["curve"].size(), 257u);
  EXPECT_EQ(wave["curve"][0], 0.0);
  EXPECT_EQ(wave["curve"][64], 0.5);
  EXPECT_EQ(wave["curve"][128], 1.0);
  EXPECT_EQ(header["meshes"], Json::parse(R"([{"targets": 1}])"));

  Json f0 = next();
  ASSERT_EQ(f0["type"], "frame") << f0.dump();
  EXPECT_EQ(f0["parameters"]["open"], 0);
  EXPECT_EQ(f0["morphs"], Json::parse("[[0.0]]"));
  for (const Json& d : f0["drivers"]) EXPECT_EQ(d["state"], "stopped");
  // Released materials: the static _Glow, the colour binding's first colour, keyword off.
  ASSERT_EQ(f0["materials"].size(), 3u) << f0["materials"].dump();
  EXPECT_EQ(f0["materials"][0]["value"], 0.25);
  EXPECT_EQ(f0["materials"][0]["source"], "static");
  // Idle: nothing is sent (the next message is the answer to a bad control
  // sent after a pause; a timed-out read would spoil the stream).
  auto expect_idle = [&] {
    std::this_thread::sleep_for(300ms);
    c.text(R"({"action": "start", "driver": "nope"})");
    Json m = next();
    EXPECT_EQ(m["type"], "error") << m.dump();
    EXPECT_NE(m["message"].get<std::string>().find("'wave', 'glow', 'blink'"), std::string::npos)
        << m.dump();
  };
  expect_idle();

  c.text(R"({"action": "start", "driver": "wave"})");
  // The phase since the base frame: base_phase + (step - base_step) / 30 s ×
  // 0.5 Hz × speed; a speed change rebases at the first frame showing it.
  std::uint64_t base_step = f0["step"];
  double base_phase = 0.0;
  double speed = 1.0;
  int checked = 0;
  bool answered = false;
  while (checked < 40) {
    Json f = next();
    ASSERT_FALSE(f.is_null());
    if (f["type"] == "error") {  // the bad control: answered, the connection stays
      EXPECT_EQ(f["error"], "BEM_DRIVER_CONTROL");
      EXPECT_NE(f["message"].get<std::string>().find("jump"), std::string::npos);
      answered = true;
      continue;
    }
    ASSERT_EQ(f["type"], "frame") << f.dump();
    const Json& d = f["drivers"][0];
    ASSERT_EQ(d["state"], "playing");
    const std::uint64_t step = f["step"];
    const double p = d["phase"];
    if (d["speed"].get<double>() != speed) {
      speed = d["speed"];
      EXPECT_EQ(speed, 2.0);
      base_step = step;
      base_phase = p;
    } else {
      const double expect =
          std::fmod(base_phase + static_cast<double>(step - base_step) / 30.0 * 0.5 * speed, 1.0);
      const double diff = p - expect;  // on the circle: 0.9999… and 0 are the same phase
      EXPECT_NEAR(diff - std::round(diff), 0.0, 1e-9) << f.dump();
    }
    const double w = p < 0.5 ? 2 * p : 2 - 2 * p;
    EXPECT_NEAR(d["w"].get<double>(), w, 1e-12);
    const long tick = std::lround(w * 100);
    EXPECT_EQ(f["parameters"]["open"], tick);
    EXPECT_EQ(d["bindings"][0]["tick"], tick);
    EXPECT_NEAR(f["morphs"][0][0].get<double>(), static_cast<double>(tick) / 100.0, 1e-6);
    if (++checked == 10) {
      c.text(R"({"action": "speed", "driver": "wave", "value": 2})");
      c.text(R"({"action": "jump", "driver": "wave"})");
    }
  }
  EXPECT_TRUE(answered);
  EXPECT_EQ(speed, 2.0);
  c.text(R"({"action": "stop", "driver": "wave"})");
  for (int i = 0; i < 20; ++i) {
    Json f = next();
    ASSERT_EQ(f["type"], "frame");
    if (f["drivers"][0]["state"] != "stopped") continue;
    EXPECT_EQ(f["parameters"]["open"], 0);
    EXPECT_EQ(f["morphs"], Json::parse("[[0.0]]"));
    expect_idle();
    return;
  }
  ADD_FAILURE() << "no stopped frame after stop";
}

TEST_F(WsTest, StopSendsGoingAwayCloseToStreamAndLiveClients) {
  auto id = bvh_motion();
  WsClient stream;
  ASSERT_EQ(stream.connect(port_, "/api/motions/" + std::to_string(id) + "/stream"), 101u);
  ASSERT_TRUE(stream.read().ok);  // the header
  WsClient viewer;
  ASSERT_EQ(viewer.connect(port_, "/api/live/lobby?role=view"), 101u);
  ASSERT_TRUE(viewer.read().ok);
  // stop() waits for the close handshakes, which need the clients to read:
  // it runs on another thread while the clients read here.
  const auto t0 = std::chrono::steady_clock::now();
  std::thread stopper([this] { server_->stop(); });
  const unsigned stream_code = stream.wait_close();
  const auto reason = stream.reason().reason;
  const std::string stream_reason(reason.data(), reason.size());
  const unsigned viewer_code = viewer.wait_close();
  stopper.join();
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(stream_code, 1001u);  // RFC 6455 §7.4.1 "going away"
  EXPECT_EQ(viewer_code, 1001u);
  EXPECT_EQ(stream_reason.rfind("server shutting down", 0), 0u) << stream_reason;
  // Both clients answered the close: no wait for the 2 s fallback.
  EXPECT_LT(took, 1900ms);
}

}  // namespace
}  // namespace charkit::server
