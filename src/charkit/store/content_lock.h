// Per-content locks in the catalogue (table `content_locks`, schema 3):
// the upload of some bytes (blob published, asset row, record) and the
// removal of a blob whose last record went never interleave — across
// threads, processes and hosts sharing one catalogue and one blob store.
// A holder that dies loses its lock when the lease runs out.
// Protocol: docs/contracts/data-models.md §Content locks.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/store/blob_store.h"
#include "charkit/store/catalogue.h"

namespace charkit::store {

/// Held locks on some digests; released on destruction (or release()).
class ContentLock {
 public:
  ContentLock() = default;
  ContentLock(ContentLock&& other) noexcept;
  ContentLock& operator=(ContentLock&& other) noexcept;
  ContentLock(const ContentLock&) = delete;
  ContentLock& operator=(const ContentLock&) = delete;
  ~ContentLock();

  /// Gives the locks back (best effort: a lost database leaves them to expire).
  void release();
  const std::vector<std::string>& digests() const { return digests_; }

 private:
  friend core::Result<ContentLock> lock_content(Catalogue&, std::vector<std::string>,
                                                std::chrono::milliseconds,
                                                std::chrono::milliseconds);
  Catalogue* cat_ = nullptr;
  std::vector<std::string> digests_;
  std::string token_;
};

/// Takes the lock of every digest (sorted, duplicates dropped, so two
/// callers never wait on each other in a cycle), waiting up to `wait` with
/// short sleeps (the catalogue is not held while waiting). `lease`: how long
/// a holder that died blocks others. Errors: STORE_BUSY (not free within
/// `wait`), CATALOGUE_SQL, STORE_BAD_DIGEST.
core::Result<ContentLock> lock_content(Catalogue& cat, std::vector<std::string> digests,
                                       std::chrono::milliseconds lease = std::chrono::minutes(15),
                                       std::chrono::milliseconds wait = std::chrono::seconds(60));

/// Removes the blobs of assets whose last reference went (Removed::orphans),
/// each under its digest's lock and only if no asset row with that digest
/// and key exists again (an upload of the same bytes may have come in
/// between). Returns the digests whose blobs were removed.
std::vector<std::string> remove_orphan_blobs(Catalogue& cat, const BlobStore& blobs,
                                             const std::vector<Asset>& orphans);

}  // namespace charkit::store
