// The plain HTML page served at GET / (no build step, no external files):
// lists models, motions and packages with their states and offers uploads;
// and the login page.
#pragma once

#include <string_view>

namespace charkit::server {

std::string_view index_html();
/// GET /login: a form that posts an API token to /api/session (which sets
/// the login cookie) — how a browser logs in once the server needs tokens.
std::string_view login_html();
/// GET /favicon.ico: charkit's icon, an SVG (image/svg+xml), linked by the
/// console and the built-in pages.
std::string_view favicon_svg();

}  // namespace charkit::server
