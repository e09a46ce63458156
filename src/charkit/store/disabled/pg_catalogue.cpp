// Built instead of ../pg_catalogue.cpp when CHARKIT_WITH_POSTGRESQL=OFF:
// a PostgreSQL URL is a clear error and libpq is not linked.
#include "charkit/store/detail/sql_connection.h"
#include "charkit/store/error_codes.h"

namespace charkit::store::detail {

core::Result<std::unique_ptr<Connection>> open_postgresql(const std::string&, const std::string&) {
  return core::make_error(
      codes::CATALOGUE_PG_DISABLED,
      "this charkit was built without PostgreSQL (CHARKIT_WITH_POSTGRESQL=OFF); "
      "use a SQLite catalogue (a file path) or rebuild with PostgreSQL");
}

}  // namespace charkit::store::detail
