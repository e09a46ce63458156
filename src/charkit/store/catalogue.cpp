#include "charkit/store/catalogue.h"

#include <algorithm>
#include <array>

#include "charkit/core/enum_names.h"
#include "charkit/core/json.h"
#include "charkit/core/utf8.h"
#include "charkit/store/detail/catalogue_impl.h"
#include "charkit/store/error_codes.h"

namespace charkit::store {

using core::make_error;
using core::Result;
using core::Status;
using detail::Dialect;
using detail::Row;
using detail::to_f64;
using detail::to_i64;
using detail::to_str;
using detail::Value;
using Params = std::vector<Value>;

namespace {

// ------------------------------------------------------------ migrations
// One entry per schema version; each runs once, in its own transaction.
// "{ID}" is the dialect's auto-increment key. Never edit a released entry:
// add a new one (docs/contracts/data-models.md §Migrations).
struct Migration {
  int version;
  std::vector<std::string_view> statements;
};

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list{
      {1,
       {
           R"(CREATE TABLE assets (
  id {ID},
  sha256 TEXT NOT NULL UNIQUE CHECK (length(sha256) = 64),
  kind TEXT NOT NULL CHECK (kind IN ('models','motions','packages','keypoints')),
  ext TEXT NOT NULL,
  size BIGINT NOT NULL CHECK (size >= 0),
  original_name TEXT NOT NULL DEFAULT '',
  storage_key TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  refcount BIGINT NOT NULL DEFAULT 0 CHECK (refcount >= 0)))",
           R"(CREATE TABLE models (
  id {ID},
  asset_id BIGINT NOT NULL UNIQUE REFERENCES assets(id),
  format TEXT NOT NULL,
  vrm_version TEXT NOT NULL DEFAULT '',
  skinned INTEGER NOT NULL DEFAULT 0 CHECK (skinned IN (0, 1)),
  humanoid_bones INTEGER NOT NULL DEFAULT 0,
  name TEXT NOT NULL DEFAULT '',
  intake_state TEXT NOT NULL DEFAULT 'pending'
    CHECK (intake_state IN ('pending','running','done','failed')),
  error TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL))",
           R"(CREATE TABLE motions (
  id {ID},
  asset_id BIGINT NOT NULL UNIQUE REFERENCES assets(id),
  format TEXT NOT NULL,
  fps DOUBLE PRECISION NOT NULL DEFAULT 30 CHECK (fps > 0),
  frames BIGINT NOT NULL DEFAULT 0,
  duration_s DOUBLE PRECISION NOT NULL DEFAULT 0,
  preprocess_state TEXT NOT NULL DEFAULT 'pending'
    CHECK (preprocess_state IN ('pending','running','done','failed')),
  error TEXT NOT NULL DEFAULT '',
  keypoints_asset_id BIGINT REFERENCES assets(id),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL))",
           R"(CREATE TABLE packages (
  id {ID},
  asset_id BIGINT NOT NULL UNIQUE REFERENCES assets(id),
  bem_version TEXT NOT NULL DEFAULT '',
  container TEXT NOT NULL DEFAULT '',
  validity TEXT NOT NULL DEFAULT 'unknown' CHECK (validity IN ('unknown','valid','invalid')),
  report_json TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL))",
           R"(CREATE TABLE jobs (
  id {ID},
  kind TEXT NOT NULL,
  payload TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','running','done','failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
  worker TEXT NOT NULL DEFAULT '',
  lease_until BIGINT,
  error TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL))",
           "CREATE INDEX motions_state ON motions (preprocess_state, id)",
           "CREATE INDEX motions_keypoints ON motions (keypoints_asset_id)",
           "CREATE INDEX jobs_state ON jobs (state, id)",
       }},
      {2,
       {
           R"(CREATE TABLE api_tokens (
  id {ID},
  name TEXT NOT NULL DEFAULT '',
  scope TEXT NOT NULL CHECK (scope IN ('read','write','admin')),
  secret_sha256 TEXT NOT NULL UNIQUE CHECK (length(secret_sha256) = 64),
  hint TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  revoked_at BIGINT))",
       }},
      {3,
       {
           // Per-content locks (content_lock.h) and each record's own client
           // file name (assets are content: the first upload's name is not
           // every record's).
           R"(CREATE TABLE content_locks (
  sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64),
  token TEXT NOT NULL,
  until_ms BIGINT NOT NULL))",
           "ALTER TABLE models ADD COLUMN original_name TEXT NOT NULL DEFAULT ''",
           "ALTER TABLE motions ADD COLUMN original_name TEXT NOT NULL DEFAULT ''",
           "ALTER TABLE packages ADD COLUMN original_name TEXT NOT NULL DEFAULT ''",
       }},
      {4,
       {
           // Warnings of a motion's preprocessing: a JSON array of
           // {"code", "message"} (existing rows: none).
           "ALTER TABLE motions ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]'",
       }},
      {5,
       {
           // Browser sessions (tokens.h): the console's login cookie holds a
           // session secret, never an API token; only its SHA-256 is kept.
           R"(CREATE TABLE api_sessions (
  id {ID},
  token_id BIGINT NOT NULL REFERENCES api_tokens(id),
  secret_sha256 TEXT NOT NULL UNIQUE CHECK (length(secret_sha256) = 64),
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  last_used_at BIGINT,
  revoked_at BIGINT))",
           "CREATE INDEX api_sessions_token ON api_sessions (token_id)",
       }},
  };
  return list;
}

std::string dialect_sql(std::string_view sql, Dialect d) {
  std::string s(sql);
  const std::string_view id =
      d == Dialect::sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGSERIAL PRIMARY KEY";
  for (auto pos = s.find("{ID}"); pos != std::string::npos; pos = s.find("{ID}"))
    s.replace(pos, 4, id);
  return s;
}

std::int64_t clamp_limit(std::int64_t limit) {
  return std::clamp<std::int64_t>(limit, 1, 1000);
}

// ------------------------------------------------------------ rows

constexpr std::string_view kAssetCols =
    "id, sha256, kind, ext, size, original_name, storage_key, created_at, refcount";
Asset asset_from(const Row& r) {
  Asset a;
  a.id = to_i64(r[0]);
  a.sha256 = to_str(r[1]);
  a.kind = parse_kind(to_str(r[2])).value_or(Kind::model);
  a.ext = to_str(r[3]);
  a.size = static_cast<std::uint64_t>(to_i64(r[4]));
  a.original_name = to_str(r[5]);
  a.storage_key = to_str(r[6]);
  a.created_at = to_i64(r[7]);
  a.refcount = to_i64(r[8]);
  return a;
}

constexpr std::string_view kModelCols =
    "id, asset_id, format, vrm_version, skinned, humanoid_bones, name, intake_state, error, "
    "created_at, updated_at, original_name";
Model model_from(const Row& r) {
  Model m;
  m.id = to_i64(r[0]);
  m.asset_id = to_i64(r[1]);
  m.format = to_str(r[2]);
  m.vrm_version = to_str(r[3]);
  m.skinned = to_i64(r[4]) != 0;
  m.humanoid_bones = to_i64(r[5]);
  m.name = to_str(r[6]);
  m.intake_state = parse_preprocess_state(to_str(r[7])).value_or(PreprocessState::pending);
  m.error = to_str(r[8]);
  m.created_at = to_i64(r[9]);
  m.updated_at = to_i64(r[10]);
  m.original_name = to_str(r[11]);
  return m;
}

// The warnings column: a JSON array of {"code", "message"}, bounded
// (kMaxMotionWarnings, kMaxMotionWarningBytes) and valid UTF-8.
std::string warnings_text(const std::vector<MotionWarning>& ws) {
  core::Json arr = core::Json::array();
  for (std::size_t i = 0; i < ws.size() && i < kMaxMotionWarnings; ++i)
    arr.push_back(core::Json{{"code", core::to_valid_utf8(core::utf8_prefix(ws[i].code, 128))},
                             {"message", core::to_valid_utf8(core::utf8_prefix(
                                             ws[i].message, kMaxMotionWarningBytes))}});
  return arr.dump();
}
// A cell this code did not write (or damaged) gives no warnings, not an error.
std::vector<MotionWarning> warnings_from(const std::string& text) {
  std::vector<MotionWarning> out;
  auto j = core::parse_json_strict(text);
  if (!j || !j->is_array()) return out;
  for (const auto& w : *j) {
    if (!w.is_object()) continue;
    auto c = w.find("code");
    auto m = w.find("message");
    if (c == w.end() || m == w.end() || !c->is_string() || !m->is_string()) continue;
    out.push_back({c->get<std::string>(), m->get<std::string>()});
  }
  return out;
}

constexpr std::string_view kMotionCols =
    "id, asset_id, format, fps, frames, duration_s, preprocess_state, error, keypoints_asset_id, "
    "created_at, updated_at, original_name, warnings";
Motion motion_from(const Row& r) {
  Motion m;
  m.id = to_i64(r[0]);
  m.asset_id = to_i64(r[1]);
  m.format = to_str(r[2]);
  m.fps = to_f64(r[3]);
  m.frames = to_i64(r[4]);
  m.duration_s = to_f64(r[5]);
  m.preprocess_state = parse_preprocess_state(to_str(r[6])).value_or(PreprocessState::pending);
  m.error = to_str(r[7]);
  if (r[8]) m.keypoints_asset_id = to_i64(r[8]);
  m.created_at = to_i64(r[9]);
  m.updated_at = to_i64(r[10]);
  m.original_name = to_str(r[11]);
  m.warnings = warnings_from(to_str(r[12]));
  return m;
}

constexpr std::string_view kPackageCols =
    "id, asset_id, bem_version, container, validity, report_json, created_at, updated_at, "
    "original_name";
Package package_from(const Row& r) {
  Package p;
  p.id = to_i64(r[0]);
  p.asset_id = to_i64(r[1]);
  p.bem_version = to_str(r[2]);
  p.container = to_str(r[3]);
  p.validity = parse_validity(to_str(r[4])).value_or(Validity::unknown);
  p.report_json = to_str(r[5]);
  p.created_at = to_i64(r[6]);
  p.updated_at = to_i64(r[7]);
  p.original_name = to_str(r[8]);
  return p;
}

using detail::cat;

}  // namespace

namespace {
constexpr core::EnumNames<PreprocessState, 4> kPreprocessStates{
    {{{PreprocessState::pending, "pending"},
      {PreprocessState::running, "running"},
      {PreprocessState::done, "done"},
      {PreprocessState::failed, "failed"}}}};
constexpr core::EnumNames<Validity, 3> kValidities{
    {{{Validity::unknown, "unknown"}, {Validity::valid, "valid"}, {Validity::invalid, "invalid"}}}};
}  // namespace

std::string_view state_name(PreprocessState s) {
  return kPreprocessStates.name(s);
}
std::optional<PreprocessState> parse_preprocess_state(std::string_view s) {
  return kPreprocessStates.parse(s);
}
std::string_view validity_name(Validity v) {
  return kValidities.name(v);
}
std::optional<Validity> parse_validity(std::string_view s) {
  return kValidities.parse(s);
}

int latest_schema_version() {
  return migrations().back().version;
}

// ------------------------------------------------------------ open

Catalogue::Catalogue(std::unique_ptr<detail::Connection> conn, CatalogueOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->conn = std::move(conn);
  impl_->options = std::move(options);
  if (!impl_->options.now) impl_->options.now = [] { return std::chrono::system_clock::now(); };
}
Catalogue::~Catalogue() = default;

Result<std::unique_ptr<Catalogue>> Catalogue::open(std::string_view url, CatalogueOptions options) {
  Result<std::unique_ptr<detail::Connection>> conn =
      make_error(codes::CATALOGUE_BAD_URL, "empty database URL");
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    conn = detail::open_postgresql(std::string(url), options.pg_schema);
  } else {
    std::string_view path = url;
    if (path.starts_with("sqlite://"))
      path.remove_prefix(9);
    else if (path.starts_with("sqlite:"))
      path.remove_prefix(7);
    if (path.empty())
      return make_error(codes::CATALOGUE_BAD_URL, "no SQLite path in '" + std::string(url) + "'");
    if (path.find("://") != std::string_view::npos)
      return make_error(codes::CATALOGUE_BAD_URL,
                        "unknown database URL scheme: '" + std::string(url) + "'");
    conn = detail::open_sqlite(std::string(path), options.busy_timeout);
  }
  if (!conn) return std::move(conn).error();
  std::unique_ptr<Catalogue> c(new Catalogue(std::move(*conn), std::move(options)));
  if (auto m = c->migrate(); !m) return std::move(m).error();
  return c;
}

std::string_view Catalogue::backend() const {
  return impl_->conn->dialect() == Dialect::sqlite ? "sqlite" : "postgresql";
}

std::int64_t Catalogue::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             impl_->options.now().time_since_epoch())
      .count();
}

Result<int> Catalogue::schema_version() {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  const char* exists_sql = db.dialect() == Dialect::sqlite
                               ? "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
                               : "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND "
                                 "tablename = ?";
  auto ex = db.exec(exists_sql, Params{Value{std::string("schema_version")}});
  if (!ex) return std::move(ex).error();
  if (ex->rows.empty()) return 0;
  auto r = db.exec("SELECT MAX(version) FROM schema_version");
  if (!r) return std::move(r).error();
  return static_cast<int>(r->rows.empty() ? 0 : to_i64(r->rows[0][0]));
}

Status Catalogue::migrate() {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  const Dialect d = db.dialect();
  for (const Migration& m : migrations()) {
    auto step = impl_->in_transaction([&]() -> Status {
      if (d == Dialect::postgresql) {
        // Serialise migrators across connections for the rest of this transaction.
        if (auto l = db.exec("SELECT pg_advisory_xact_lock(7242011)"); !l)
          return std::move(l).error();
      }
      // (SQLite: BEGIN IMMEDIATE already holds the write lock.)
      if (auto t =
              db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                      "applied_at BIGINT NOT NULL)");
          !t)
        return std::move(t).error();
      auto have = db.exec("SELECT 1 FROM schema_version WHERE version = ?",
                          Params{Value{std::int64_t{m.version}}});
      if (!have) return std::move(have).error();
      if (!have->rows.empty()) return core::Ok{};  // applied before (maybe by another process)
      for (std::string_view sql : m.statements) {
        if (auto r = db.exec(dialect_sql(sql, d)); !r)
          return make_error(codes::CATALOGUE_MIGRATION,
                            "migration " + std::to_string(m.version) + ": " + r.error().message);
      }
      if (auto r = db.exec("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                           Params{std::int64_t{m.version}, now_ms()});
          !r)
        return std::move(r).error();
      return core::Ok{};
    });
    if (!step) return step;
  }
  return core::Ok{};
}

// ------------------------------------------------------------ assets

Result<Added<Asset>> Catalogue::put_asset(const NewAsset& a) {
  if (a.sha256.size() != 64)
    return make_error(codes::CATALOGUE_INVALID, "sha256 must be 64 hex digits");
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  return impl_->in_transaction([&]() -> Result<Added<Asset>> {
    auto ins = db.exec(
        "INSERT INTO assets (sha256, kind, ext, size, original_name, storage_key, created_at, "
        "refcount) VALUES (?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (sha256) DO NOTHING RETURNING id",
        Params{a.sha256, std::string(kind_name(a.kind)), a.ext, static_cast<std::int64_t>(a.size),
               a.original_name, a.storage_key, now_ms()});
    if (!ins) return std::move(ins).error();
    auto sel = db.exec(cat({"SELECT ", kAssetCols, " FROM assets WHERE sha256 = ?"}),
                       Params{Value{a.sha256}});
    if (!sel) return std::move(sel).error();
    if (sel->rows.empty()) return make_error(codes::CATALOGUE_SQL, "asset vanished after insert");
    return Added<Asset>{asset_from(sel->rows[0]), !ins->rows.empty()};
  });
}

Result<std::optional<Asset>> Catalogue::get_asset(std::int64_t id) {
  std::lock_guard lock(impl_->mu);
  auto r = impl_->conn->exec(cat({"SELECT ", kAssetCols, " FROM assets WHERE id = ?"}),
                             Params{Value{id}});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return std::optional<Asset>();
  return std::optional<Asset>(asset_from(r->rows[0]));
}

Result<std::optional<Asset>> Catalogue::find_asset(std::string_view sha256) {
  std::lock_guard lock(impl_->mu);
  auto r = impl_->conn->exec(cat({"SELECT ", kAssetCols, " FROM assets WHERE sha256 = ?"}),
                             Params{Value{std::string(sha256)}});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return std::optional<Asset>();
  return std::optional<Asset>(asset_from(r->rows[0]));
}

Result<std::vector<Asset>> Catalogue::remove_unreferenced_assets() {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  return impl_->in_transaction([&]() -> Result<std::vector<Asset>> {
    auto r = db.exec(cat({"DELETE FROM assets WHERE refcount = 0 RETURNING ", kAssetCols}));
    if (!r) return std::move(r).error();
    std::vector<Asset> out;
    for (const Row& row : r->rows) out.push_back(asset_from(row));
    return out;
  });
}

// ------------------------------------------------------------ records, shared steps

namespace {

// Adds `delta` to an asset's refcount; at zero the row goes and is appended to `orphans`.
Status adjust_ref(detail::Connection& db, std::int64_t asset_id, std::int64_t delta,
                  std::vector<Asset>* orphans) {
  auto u =
      db.exec("UPDATE assets SET refcount = refcount + ? WHERE id = ?", Params{delta, asset_id});
  if (!u) return std::move(u).error();
  if (u->changes == 0)
    return make_error(codes::CATALOGUE_NOT_FOUND, "no asset " + std::to_string(asset_id));
  if (delta < 0 && orphans) {
    auto d =
        db.exec(cat({"DELETE FROM assets WHERE id = ? AND refcount = 0 RETURNING ", kAssetCols}),
                Params{Value{asset_id}});
    if (!d) return std::move(d).error();
    for (const Row& row : d->rows) orphans->push_back(asset_from(row));
  }
  return core::Ok{};
}

struct Table {
  std::string_view name;
  std::string_view cols;
  std::string_view state_col;  // filter column for ListQuery::state
  std::string_view format_col;
};
constexpr Table kModels{"models", kModelCols, "intake_state", "format"};
constexpr Table kMotions{"motions", kMotionCols, "preprocess_state", "format"};
constexpr Table kPackages{"packages", kPackageCols, "validity", "container"};

// INSERT … ON CONFLICT (asset_id) DO NOTHING, then the row for the asset;
// the asset's refcount grows only when this call created the record.
template <typename T, typename Decode>
Result<Added<T>> add_record(detail::Connection& db, const Table& t, std::int64_t asset_id,
                            std::string_view insert_cols, Params values, Decode decode) {
  auto a = db.exec("SELECT id FROM assets WHERE id = ?", Params{Value{asset_id}});
  if (!a) return std::move(a).error();
  if (a->rows.empty())
    return make_error(codes::CATALOGUE_NOT_FOUND, "no asset " + std::to_string(asset_id));
  std::string marks = "?";
  for (std::size_t i = 0; i < values.size(); ++i) marks += ", ?";
  values.insert(values.begin(), asset_id);
  auto ins = db.exec(cat({"INSERT INTO ", t.name, " (asset_id, ", insert_cols, ") VALUES (", marks,
                          ") ON CONFLICT (asset_id) DO NOTHING RETURNING id"}),
                     values);
  if (!ins) return std::move(ins).error();
  const bool created = !ins->rows.empty();
  if (created)
    if (auto s = adjust_ref(db, asset_id, +1, nullptr); !s) return std::move(s).error();
  auto sel = db.exec(cat({"SELECT ", t.cols, " FROM ", t.name, " WHERE asset_id = ?"}),
                     Params{Value{asset_id}});
  if (!sel) return std::move(sel).error();
  if (sel->rows.empty()) return make_error(codes::CATALOGUE_SQL, "record vanished after insert");
  return Added<T>{decode(sel->rows[0]), created};
}

template <typename T, typename Decode>
Result<std::optional<T>> get_record(detail::Connection& db, const Table& t, std::int64_t id,
                                    Decode decode) {
  auto r = db.exec(cat({"SELECT ", t.cols, " FROM ", t.name, " WHERE id = ?"}), Params{Value{id}});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return std::optional<T>();
  return std::optional<T>(decode(r->rows[0]));
}

template <typename T, typename Decode>
Result<Page<T>> list_records(detail::Connection& db, const Table& t, const ListQuery& q,
                             Decode decode) {
  std::string where;
  Params filter;
  if (!q.format.empty()) {
    where += cat({" AND ", t.format_col, " = ?"});
    filter.emplace_back(q.format);
  }
  if (!q.state.empty()) {
    where += cat({" AND ", t.state_col, " = ?"});
    filter.emplace_back(q.state);
  }
  auto count = db.exec(cat({"SELECT COUNT(*) FROM ", t.name, " WHERE 1 = 1", where}), filter);
  if (!count) return std::move(count).error();
  const std::int64_t limit = clamp_limit(q.limit);
  Params p{q.after_id};
  p.insert(p.end(), filter.begin(), filter.end());
  p.emplace_back(limit + 1);  // one more tells whether a next page exists
  auto rows = db.exec(
      cat({"SELECT ", t.cols, " FROM ", t.name, " WHERE id > ?", where, " ORDER BY id LIMIT ?"}),
      p);
  if (!rows) return std::move(rows).error();
  Page<T> page;
  page.total = to_i64(count->rows[0][0]);
  for (const Row& r : rows->rows) {
    if (static_cast<std::int64_t>(page.items.size()) == limit) {
      page.next_after_id = page.items.back().id;
      break;
    }
    page.items.push_back(decode(r));
  }
  return page;
}

// Deletes the record and releases the assets named by `ref_cols`.
Result<Removed> delete_record(detail::Connection& db, const Table& t, std::int64_t id,
                              std::string_view ref_cols) {
  Removed out;
  auto sel = db.exec(cat({"DELETE FROM ", t.name, " WHERE id = ? RETURNING ", ref_cols}),
                     Params{Value{id}});
  if (!sel) return std::move(sel).error();
  if (sel->rows.empty()) return out;
  out.found = true;
  for (const auto& cell : sel->rows[0])
    if (cell)
      if (auto s = adjust_ref(db, to_i64(cell), -1, &out.orphans); !s) return std::move(s).error();
  return out;
}

}  // namespace

// ------------------------------------------------------------ models

Result<Added<Model>> Catalogue::add_model(std::int64_t asset_id, const Model& m) {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  const std::int64_t now = now_ms();
  return impl_->in_transaction([&] {
    return add_record<Model>(
        db, kModels, asset_id,
        "format, vrm_version, skinned, humanoid_bones, name, intake_state, error, created_at, "
        "updated_at, original_name",
        Params{m.format, m.vrm_version, std::int64_t{m.skinned ? 1 : 0}, m.humanoid_bones, m.name,
               std::string(state_name(m.intake_state)), m.error, now, now, m.original_name},
        model_from);
  });
}

Result<std::optional<Model>> Catalogue::get_model(std::int64_t id) {
  std::lock_guard lock(impl_->mu);
  return get_record<Model>(*impl_->conn, kModels, id, model_from);
}

Result<Page<Model>> Catalogue::list_models(const ListQuery& q) {
  std::lock_guard lock(impl_->mu);
  return list_records<Model>(*impl_->conn, kModels, q, model_from);
}

Result<bool> Catalogue::update_model(const Model& m) {
  std::lock_guard lock(impl_->mu);
  auto r = impl_->conn->exec(
      "UPDATE models SET format = ?, vrm_version = ?, skinned = ?, humanoid_bones = ?, name = ?, "
      "intake_state = ?, error = ?, updated_at = ? WHERE id = ?",
      Params{m.format, m.vrm_version, std::int64_t{m.skinned ? 1 : 0}, m.humanoid_bones, m.name,
             std::string(state_name(m.intake_state)), m.error, now_ms(), m.id});
  if (!r) return std::move(r).error();
  return r->changes > 0;
}

Result<Removed> Catalogue::delete_model(std::int64_t id) {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  return impl_->in_transaction([&] { return delete_record(db, kModels, id, "asset_id"); });
}

// ------------------------------------------------------------ motions

Result<Added<Motion>> Catalogue::add_motion(std::int64_t asset_id, const Motion& m) {
  if (!(m.fps > 0)) return make_error(codes::CATALOGUE_INVALID, "fps must be positive");
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  const std::int64_t now = now_ms();
  return impl_->in_transaction([&]() -> Result<Added<Motion>> {
    // The keypoint asset is attached through update_motion, which keeps its refcount.
    return add_record<Motion>(
        db, kMotions, asset_id,
        "format, fps, frames, duration_s, preprocess_state, error, created_at, updated_at, "
        "original_name, warnings",
        Params{m.format, m.fps, m.frames, m.duration_s, std::string(state_name(m.preprocess_state)),
               m.error, now, now, m.original_name, warnings_text(m.warnings)},
        motion_from);
  });
}

Result<std::optional<Motion>> Catalogue::get_motion(std::int64_t id) {
  std::lock_guard lock(impl_->mu);
  return get_record<Motion>(*impl_->conn, kMotions, id, motion_from);
}

Result<Page<Motion>> Catalogue::list_motions(const ListQuery& q) {
  std::lock_guard lock(impl_->mu);
  return list_records<Motion>(*impl_->conn, kMotions, q, motion_from);
}

Result<Removed> Catalogue::update_motion(const Motion& m) {
  if (!(m.fps > 0)) return make_error(codes::CATALOGUE_INVALID, "fps must be positive");
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  return impl_->in_transaction([&]() -> Result<Removed> {
    Removed out;
    auto cur = db.exec("SELECT keypoints_asset_id FROM motions WHERE id = ?", Params{Value{m.id}});
    if (!cur) return std::move(cur).error();
    if (cur->rows.empty()) return out;
    out.found = true;
    const std::optional<std::int64_t> old_kp =
        cur->rows[0][0] ? std::optional<std::int64_t>(to_i64(cur->rows[0][0])) : std::nullopt;
    const Value kp = m.keypoints_asset_id ? Value{*m.keypoints_asset_id} : Value{};
    if (m.keypoints_asset_id != old_kp && m.keypoints_asset_id)
      if (auto s = adjust_ref(db, *m.keypoints_asset_id, +1, nullptr); !s)
        return std::move(s).error();
    auto r = db.exec(
        "UPDATE motions SET format = ?, fps = ?, frames = ?, duration_s = ?, preprocess_state = ?, "
        "error = ?, keypoints_asset_id = ?, warnings = ?, updated_at = ? WHERE id = ?",
        Params{m.format, m.fps, m.frames, m.duration_s, std::string(state_name(m.preprocess_state)),
               m.error, kp, warnings_text(m.warnings), now_ms(), m.id});
    if (!r) return std::move(r).error();
    if (m.keypoints_asset_id != old_kp && old_kp)
      if (auto s = adjust_ref(db, *old_kp, -1, &out.orphans); !s) return std::move(s).error();
    return out;
  });
}

Result<Removed> Catalogue::delete_motion(std::int64_t id) {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  return impl_->in_transaction(
      [&] { return delete_record(db, kMotions, id, "asset_id, keypoints_asset_id"); });
}

// ------------------------------------------------------------ packages

Result<Added<Package>> Catalogue::add_package(std::int64_t asset_id, const Package& p) {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  const std::int64_t now = now_ms();
  return impl_->in_transaction([&] {
    return add_record<Package>(
        db, kPackages, asset_id,
        "bem_version, container, validity, report_json, created_at, updated_at, original_name",
        Params{p.bem_version, p.container, std::string(validity_name(p.validity)), p.report_json,
               now, now, p.original_name},
        package_from);
  });
}

Result<std::optional<Package>> Catalogue::get_package(std::int64_t id) {
  std::lock_guard lock(impl_->mu);
  return get_record<Package>(*impl_->conn, kPackages, id, package_from);
}

Result<Page<Package>> Catalogue::list_packages(const ListQuery& q) {
  std::lock_guard lock(impl_->mu);
  return list_records<Package>(*impl_->conn, kPackages, q, package_from);
}

Result<bool> Catalogue::update_package(const Package& p) {
  std::lock_guard lock(impl_->mu);
  auto r = impl_->conn->exec(
      "UPDATE packages SET bem_version = ?, container = ?, validity = ?, report_json = ?, "
      "updated_at = ? WHERE id = ?",
      Params{p.bem_version, p.container, std::string(validity_name(p.validity)), p.report_json,
             now_ms(), p.id});
  if (!r) return std::move(r).error();
  return r->changes > 0;
}

Result<Removed> Catalogue::delete_package(std::int64_t id) {
  std::lock_guard lock(impl_->mu);
  auto& db = *impl_->conn;
  return impl_->in_transaction([&] { return delete_record(db, kPackages, id, "asset_id"); });
}

}  // namespace charkit::store
