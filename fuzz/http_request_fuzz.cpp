// libFuzzer target: the server's own request glue (charkit/server/detail/http_glue.h)
// on arbitrary text — target splitting and percent-decoding, query strings,
// the Range header against a size taken from the input, client file names,
// the route table —
// with the invariants the server relies on checked on every result.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "charkit/server/detail/auth.h"
#include "charkit/server/detail/http_glue.h"
#include "charkit/server/detail/route_table.h"
#include "charkit/store/blob_store.h"

using namespace charkit::server;

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The first 8 bytes (when present) give a resource size for the Range check.
  std::uint64_t resource = 0;
  if (size >= 8) {
    std::memcpy(&resource, data, 8);
    resource %= (std::uint64_t{1} << 40);
    data += 8;
    size -= 8;
  }
  std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto t = parse_target(text)) {
    for (const auto& seg : t->segments) {
      check(!seg.empty() && seg != "." && seg != "..");
      check(seg.find('/') == std::string::npos && seg.find('\\') == std::string::npos);
      check(seg.find('\0') == std::string::npos);
    }
    check(t->params.size() <= kMaxQueryParams);
    (void)query_value(t->params, "filename");
    // The route table: an upload is a POST to a record kind and needs
    // write; only the three WebSocket routes hand the socket over; nothing
    // under /api but the session is open.
    const auto& seg = t->segments;
    const bool api = !seg.empty() && seg[0] == "api";
    const bool session = seg.size() == 2 && api && seg[1] == "session";
    for (const char* method : {"GET", "POST", "DELETE", "PUT"}) {
      for (bool console : {false, true}) {
        const Route r = match_route(method, *t, console);
        if (r.kind == RouteKind::upload)
          check(std::string_view(method) == "POST" && r.record_kind && r.access == Access::write);
        if (r.kind == RouteKind::websocket)
          check(r.id == RouteId::live || r.id == RouteId::motion_stream ||
                r.id == RouteId::package_drivers);
        if (api && !session) check(r.access != Access::open && r.access != Access::metrics);
        if (std::string_view(method) == "DELETE" && api && !session)
          check(r.access == Access::admin);
      }
    }
  }
  if (auto q = parse_query(text)) check(q->size() <= kMaxQueryParams);

  ByteRange r = parse_range(text, resource);
  if (r.kind == ByteRange::Kind::kSatisfiable) {
    check(r.first <= r.last);
    check(r.last < resource);
  }

  std::string name = clean_file_name(text);
  check(name.size() <= kMaxFileNameBytes);
  check(name.find('/') == std::string::npos && name.find('\\') == std::string::npos);
  check(name != "." && name != "..");
  for (char c : name) check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F);
  (void)charkit::store::extension_of(name);

  if (auto id = parse_id(text)) check(*id >= 1);
  (void)is_sha256_hex(text);
  return 0;
}
