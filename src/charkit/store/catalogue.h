// The SQL catalogue: what the store holds and what is known about it.
// One schema, one behaviour on SQLite (embedded, WAL) and PostgreSQL
// (several hosts); versioned migrations; parameterised statements only.
// Contract (tables, states, migrations): docs/contracts/data-models.md.
//
// A Catalogue owns one database connection and serialises its own calls,
// so one object may be shared by threads; open one per worker thread for
// parallel work. No exception leaves this API.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/store/blob_store.h"

namespace charkit::store {

namespace detail {
class Connection;  // sql_connection.h (internal)
}

/// The newest schema version this build knows (the migrations 1..N).
int latest_schema_version();

struct Asset {
  std::int64_t id = 0;
  std::string sha256;
  Kind kind = Kind::model;
  std::string ext;
  std::uint64_t size = 0;
  std::string original_name;
  std::string storage_key;      ///< BlobStore key
  std::int64_t created_at = 0;  ///< Unix time, milliseconds
  std::int64_t refcount = 0;    ///< rows (models, motions, packages, keypoint links) that use it
};

/// A stored blob plus the client's name, for put_asset().
struct NewAsset {
  std::string sha256;
  Kind kind = Kind::model;
  std::string ext;
  std::uint64_t size = 0;
  std::string original_name;
  std::string storage_key;
};

enum class PreprocessState { pending, running, done, failed };
std::string_view state_name(PreprocessState s);
std::optional<PreprocessState> parse_preprocess_state(std::string_view s);

struct Model {
  std::int64_t id = 0;
  std::int64_t asset_id = 0;
  std::string format;         ///< "vrm", "glb", "gltf", "fbx": this upload's own extension
  std::string original_name;  ///< this record's client file name ("" in rows before schema 3)
  std::string vrm_version;    ///< "0.x", "1.0" or "" (not VRM / unknown)
  bool skinned = false;
  std::int64_t humanoid_bones = 0;
  std::string name;
  PreprocessState intake_state = PreprocessState::pending;
  std::string error;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

/// A problem preprocessing found that did not stop it (e.g.
/// MOTION_FEW_MAPPED_JOINTS): stable code and message.
struct MotionWarning {
  std::string code;
  std::string message;
  bool operator==(const MotionWarning&) const = default;
};

struct Motion {
  std::int64_t id = 0;
  std::int64_t asset_id = 0;
  std::string format;         ///< "bvh", "fbx", "gltf", "glb", "json": this upload's own extension
  std::string original_name;  ///< this record's client file name ("" in rows before schema 3)
  double fps = 30.0;          ///< source rate kept, else 30 (model and motion format contract)
  std::int64_t frames = 0;
  double duration_s = 0.0;
  PreprocessState preprocess_state = PreprocessState::pending;
  std::string error;
  std::optional<std::int64_t> keypoints_asset_id;  ///< the NDJSON asset once done
  /// Warnings of the last preprocessing, in order (schema 4; at most
  /// kMaxMotionWarnings kept, each message cut to kMaxMotionWarningBytes).
  std::vector<MotionWarning> warnings;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

inline constexpr std::size_t kMaxMotionWarnings = 50;
inline constexpr std::size_t kMaxMotionWarningBytes = 2048;

/// Validity of a package: unknown until validation ran.
enum class Validity { unknown, valid, invalid };
std::string_view validity_name(Validity v);
std::optional<Validity> parse_validity(std::string_view s);

struct Package {
  std::int64_t id = 0;
  std::int64_t asset_id = 0;
  std::string bem_version;    ///< "1.5" …, "" until read
  std::string container;      ///< "bem" or "zip"
  std::string original_name;  ///< this record's client file name ("" in rows before schema 3)
  Validity validity = Validity::unknown;
  std::string report_json;  ///< validation report (JSON text), "" until validated
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

/// Keyset paging with optional filters. Items come in ascending id order.
struct ListQuery {
  std::int64_t after_id = 0;  ///< items with id > after_id
  std::int64_t limit = 50;    ///< clamped to [1, 1000]
  std::string format;         ///< exact match when not empty
  std::string state;  ///< models: intake state; motions: preprocess_state; packages: validity
};

template <typename T>
struct Page {
  std::vector<T> items;
  std::int64_t total = 0;          ///< rows matching the filters (all pages)
  std::int64_t next_after_id = 0;  ///< pass as after_id for the next page; 0 = no more
};

/// Result of adding a record for an asset: an identical upload gets the existing record.
template <typename T>
struct Added {
  T record;
  bool created = false;
};

/// Result of deleting a record: when an asset's last reference went, the
/// asset row is gone and `orphans` names the blobs the caller must remove.
struct Removed {
  bool found = false;
  std::vector<Asset> orphans;
};

struct CatalogueOptions {
  /// Clock for created_at/updated_at and job leases; system clock when empty.
  std::function<std::chrono::system_clock::time_point()> now;
  /// PostgreSQL only: use (and create) this schema instead of `public`;
  /// lets tests and several deployments share one database.
  std::string pg_schema;
  /// SQLite only: busy timeout.
  std::chrono::milliseconds busy_timeout{10000};
};

class Catalogue {
 public:
  /// `sqlite:PATH`, `sqlite::memory:`, a plain path, or `postgresql://…` /
  /// `postgres://…` (any libpq URI). Applies pending migrations.
  static core::Result<std::unique_ptr<Catalogue>> open(std::string_view url,
                                                       CatalogueOptions options = {});
  ~Catalogue();
  Catalogue(const Catalogue&) = delete;
  Catalogue& operator=(const Catalogue&) = delete;

  /// "sqlite" or "postgresql".
  std::string_view backend() const;
  core::Result<int> schema_version();
  /// Applies migrations above the current version, each once, each in its
  /// own transaction; concurrent callers are serialised. open() calls it.
  core::Status migrate();

  // Assets --------------------------------------------------------------
  /// Inserts the asset, or returns the existing row with the same sha256
  /// (created=false). Refcount starts at 0; records add to it.
  core::Result<Added<Asset>> put_asset(const NewAsset& asset);
  core::Result<std::optional<Asset>> get_asset(std::int64_t id);
  core::Result<std::optional<Asset>> find_asset(std::string_view sha256);
  /// Deletes assets with refcount 0 (uploads whose record never came) and returns them.
  core::Result<std::vector<Asset>> remove_unreferenced_assets();

  // Models --------------------------------------------------------------
  /// One model per asset: an existing one is returned unchanged (created=false).
  core::Result<Added<Model>> add_model(std::int64_t asset_id, const Model& fields);
  core::Result<std::optional<Model>> get_model(std::int64_t id);
  core::Result<Page<Model>> list_models(const ListQuery& q);
  /// Writes every field but id, asset_id and created_at; false when the id is unknown.
  core::Result<bool> update_model(const Model& m);
  core::Result<Removed> delete_model(std::int64_t id);

  // Motions -------------------------------------------------------------
  core::Result<Added<Motion>> add_motion(std::int64_t asset_id, const Motion& fields);
  core::Result<std::optional<Motion>> get_motion(std::int64_t id);
  core::Result<Page<Motion>> list_motions(const ListQuery& q);
  /// Writes every field but id, asset_id and created_at, and moves the
  /// keypoint-asset reference (refcounts follow; a keypoint asset no longer
  /// referenced is deleted and returned in `orphans`). found=false: unknown id.
  core::Result<Removed> update_motion(const Motion& m);
  core::Result<Removed> delete_motion(std::int64_t id);

  // Packages ------------------------------------------------------------
  core::Result<Added<Package>> add_package(std::int64_t asset_id, const Package& fields);
  core::Result<std::optional<Package>> get_package(std::int64_t id);
  core::Result<Page<Package>> list_packages(const ListQuery& q);
  core::Result<bool> update_package(const Package& p);
  core::Result<Removed> delete_package(std::int64_t id);

  /// Milliseconds since the Unix epoch from the configured clock.
  std::int64_t now_ms() const;

 private:
  friend class JobQueue;
  friend class TokenStore;
  friend class JobListener;
  friend struct ContentLockAccess;
  Catalogue(std::unique_ptr<detail::Connection> conn, CatalogueOptions options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace charkit::store
