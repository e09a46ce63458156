// The one table of `charkit serve`'s routes (docs/api.md): each route's path,
// how it is served (an answer from routes.cpp, an upload streamed into the
// blob store, a WebSocket session) and the access it needs. The connection
// (server.cpp), access control and the REST dispatcher all read a request's
// Route from match_route(); nothing else matches paths.
#pragma once

#include <optional>
#include <string_view>

#include "charkit/server/detail/auth.h"
#include "charkit/server/detail/http_glue.h"
#include "charkit/store/blob_store.h"

namespace charkit::server {

enum class RouteId {
  not_found,         ///< no route (404; the access follows the method, as for any /api path)
  console_page,      ///< `/` and the console's page routes (index.html, or the built-in page)
  console_asset,     ///< `/assets/NAME`: the console's bundle
  login,             ///< `/login`
  favicon,           ///< `/favicon.ico`: the icon (an SVG)
  session,           ///< `/api/session`: log in, who am I, log out
  healthz,           ///< `/healthz`
  metrics,           ///< `/metrics`
  asset,             ///< `/api/assets/SHA256`
  records,           ///< `/api/KIND`: list (GET), upload (POST)
  record,            ///< `/api/KIND/ID`: get, delete
  package_texture,   ///< `/api/packages/ID/textures/NAME`
  package_view,      ///< `/api/packages/ID/summary`, `…/export.glb`
  package_report,    ///< `/api/packages/ID/report`
  motion_keypoints,  ///< `/api/motions/ID/keypoints.ndjson`
  motion_stream,     ///< WebSocket `/api/motions/ID/stream`
  package_drivers,   ///< WebSocket `/api/packages/ID/drivers`
  live,              ///< WebSocket `/api/live/CHANNEL`
  live_channels,     ///< `/api/live`: the live channels open now
};

/// How a request is served once its access is granted.
enum class RouteKind {
  answer,     ///< its (bounded) body is read, then routes.cpp answers it
  upload,     ///< its body streams into the blob store (POST /api/KIND)
  websocket,  ///< the socket moves to a WebSocket session (any method: non-GET is 405)
};

struct Route {
  RouteId id = RouteId::not_found;
  RouteKind kind = RouteKind::answer;
  Access access = Access::open;
  /// The record kind of /api/KIND… routes (models, motions, packages).
  std::optional<store::Kind> record_kind;
};

/// The route of a request, from its method and the decoded path segments
/// and query (parse_target: the one parse that routing and access both
/// read). `console`: a built web console is served (its page routes exist).
/// Access: the console, /login, /healthz, /api/session and paths outside
/// /api are open; /metrics is `metrics`; under /api, DELETE needs admin,
/// POST, PUT and PATCH write, publishing to a live channel write, anything
/// else read (WebSocket streams and live viewing included), whether or not
/// the path names a route.
Route match_route(std::string_view method, const Target& target, bool console);

}  // namespace charkit::server
