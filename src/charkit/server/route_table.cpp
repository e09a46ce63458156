// The route table (detail/route_table.h; docs/api.md lists the same routes
// for users).
#include "charkit/server/detail/route_table.h"

#include <array>
#include <cstddef>

#include "charkit/server/detail/console.h"

namespace charkit::server {

namespace {

/// One route: its path as segments, "*" matching any one segment and
/// "{kind}" a record kind (models, motions, packages).
struct Entry {
  RouteId id;
  RouteKind kind;
  std::size_t size;
  std::array<std::string_view, 5> path;
};

// Matched in order: the first entry whose path fits wins.
constexpr Entry kRoutes[] = {
    {RouteId::login, RouteKind::answer, 1, {"login"}},
    {RouteId::favicon, RouteKind::answer, 1, {"favicon.ico"}},
    {RouteId::healthz, RouteKind::answer, 1, {"healthz"}},
    {RouteId::metrics, RouteKind::answer, 1, {"metrics"}},
    {RouteId::session, RouteKind::answer, 2, {"api", "session"}},
    {RouteId::asset, RouteKind::answer, 3, {"api", "assets", "*"}},
    {RouteId::live_channels, RouteKind::answer, 2, {"api", "live"}},
    {RouteId::live, RouteKind::websocket, 3, {"api", "live", "*"}},
    {RouteId::motion_stream, RouteKind::websocket, 4, {"api", "motions", "*", "stream"}},
    {RouteId::package_drivers, RouteKind::websocket, 4, {"api", "packages", "*", "drivers"}},
    {RouteId::motion_keypoints, RouteKind::answer, 4, {"api", "motions", "*", "keypoints.ndjson"}},
    {RouteId::package_view, RouteKind::answer, 4, {"api", "packages", "*", "summary"}},
    {RouteId::package_view, RouteKind::answer, 4, {"api", "packages", "*", "export.glb"}},
    {RouteId::package_report, RouteKind::answer, 4, {"api", "packages", "*", "report"}},
    {RouteId::package_texture, RouteKind::answer, 5, {"api", "packages", "*", "textures", "*"}},
    {RouteId::records, RouteKind::answer, 2, {"api", "{kind}"}},
    {RouteId::record, RouteKind::answer, 3, {"api", "{kind}", "*"}},
};

/// The record kinds of the API: keypoints are assets of motions, not records.
std::optional<store::Kind> record_kind(std::string_view name) {
  auto kind = store::parse_kind(name);
  if (kind && *kind == store::Kind::keypoints) return std::nullopt;
  return kind;
}

bool fits(const Entry& e, const std::vector<std::string>& seg, std::optional<store::Kind>& kind) {
  if (seg.size() != e.size) return false;
  for (std::size_t i = 0; i < e.size; ++i) {
    if (e.path[i] == "*") continue;
    if (e.path[i] == "{kind}") {
      kind = record_kind(seg[i]);
      if (!kind) return false;
      continue;
    }
    if (seg[i] != e.path[i]) return false;
  }
  return true;
}

Access access_of(std::string_view method, const std::vector<std::string>& seg,
                 const QueryParams& params) {
  if (seg.empty()) return Access::open;  // the console page: its API calls are checked
  if (seg.size() == 1 && (seg[0] == "healthz" || seg[0] == "login")) return Access::open;
  if (seg.size() == 1 && seg[0] == "metrics") return Access::metrics;
  if (seg[0] != "api") return Access::open;  // 404 either way; nothing to protect
  if (seg.size() == 2 && seg[1] == "session") return Access::open;  // login / logout / whoami
  if (method == "DELETE") return Access::admin;
  if (method == "POST" || method == "PUT" || method == "PATCH") return Access::write;
  // Publishing sends frames to every viewer: write. The decision reads the
  // decoded query through live_role(), as the live route does.
  if (seg.size() == 3 && seg[1] == "live" && live_role(params) == LiveRoleRequest::publish)
    return Access::write;
  return Access::read;
}

}  // namespace

Route match_route(std::string_view method, const Target& target, bool console) {
  const std::vector<std::string>& seg = target.segments;
  Route r;
  r.access = access_of(method, seg, target.params);
  if (seg.empty() || (console && is_console_route(seg))) {
    r.id = RouteId::console_page;
    return r;
  }
  if (console && seg.size() == 2 && seg[0] == "assets") {
    r.id = RouteId::console_asset;
    return r;
  }
  for (const Entry& e : kRoutes) {
    std::optional<store::Kind> kind;
    if (!fits(e, seg, kind)) continue;
    r.id = e.id;
    r.kind = e.kind;
    r.record_kind = kind;
    if (e.id == RouteId::records && method == "POST") r.kind = RouteKind::upload;
    return r;
  }
  return r;
}

}  // namespace charkit::server
