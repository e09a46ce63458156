// Boost.Asio and Boost.Beast compiled once, in their separate-compilation
// mode: every other file of the module (and of its tests) is built with
// BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION
// (src/charkit/server/CMakeLists.txt), so the libraries' non-template code
// (the reactor, the scheduler, OpenSSL glue, the HTTP parser and field
// tables, WebSocket handshake helpers) is compiled here rather than in each
// of them (docs/building.md).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
