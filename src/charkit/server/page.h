// The plain HTML page served at GET / (no build step, no external files):
// lists models, motions and packages with their states and offers uploads.
#pragma once

#include <string_view>

namespace charkit::server {

std::string_view index_html();

}  // namespace charkit::server
