// Per-content locks (content_lock.h).
#include "charkit/store/content_lock.h"

#include <algorithm>
#include <array>
#include <thread>

#include "charkit/core/random.h"
#include "charkit/core/sha256.h"
#include "charkit/store/detail/catalogue_impl.h"
#include "charkit/store/error_codes.h"

namespace charkit::store {

using core::make_error;
using detail::Value;
using Params = std::vector<Value>;

namespace {

bool hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

// The catalogue side: one transaction per attempt, no waiting inside.
struct ContentLockAccess {
  /// Takes every digest or none; false when one is held by someone else.
  static core::Result<bool> try_take(Catalogue& cat, const std::vector<std::string>& digests,
                                     const std::string& token, std::chrono::milliseconds lease) {
    auto& impl = *cat.impl_;
    std::lock_guard lock(impl.mu);
    const std::int64_t now = cat.now_ms();
    return impl.in_transaction([&]() -> core::Result<bool> {
      for (const auto& d : digests) {
        // An expired lock (its holder died) is taken over.
        auto del = impl.conn->exec("DELETE FROM content_locks WHERE sha256 = ? AND until_ms < ?",
                                   Params{d, now});
        if (!del) return std::move(del).error();
        auto ins = impl.conn->exec(
            "INSERT INTO content_locks (sha256, token, until_ms) VALUES (?, ?, ?) "
            "ON CONFLICT (sha256) DO NOTHING",
            Params{d, token, now + static_cast<std::int64_t>(lease.count())});
        if (!ins) return std::move(ins).error();
        if (ins->changes == 0) return make_error(codes::STORE_BUSY, d);  // rolls the others back
      }
      return true;
    });
  }
  static void give_back(Catalogue& cat, const std::vector<std::string>& digests,
                        const std::string& token) {
    auto& impl = *cat.impl_;
    std::lock_guard lock(impl.mu);
    for (const auto& d : digests)
      (void)impl.conn->exec("DELETE FROM content_locks WHERE sha256 = ? AND token = ?",
                            Params{d, token});
  }
};

ContentLock::ContentLock(ContentLock&& other) noexcept
    : cat_(other.cat_), digests_(std::move(other.digests_)), token_(std::move(other.token_)) {
  other.cat_ = nullptr;
}

ContentLock& ContentLock::operator=(ContentLock&& other) noexcept {
  if (this != &other) {
    release();
    cat_ = other.cat_;
    digests_ = std::move(other.digests_);
    token_ = std::move(other.token_);
    other.cat_ = nullptr;
  }
  return *this;
}

ContentLock::~ContentLock() {
  release();
}

void ContentLock::release() {
  if (!cat_) return;
  ContentLockAccess::give_back(*cat_, digests_, token_);
  cat_ = nullptr;
}

core::Result<ContentLock> lock_content(Catalogue& cat, std::vector<std::string> digests,
                                       std::chrono::milliseconds lease,
                                       std::chrono::milliseconds wait) {
  for (const auto& d : digests)
    if (!hex64(d)) return make_error(codes::STORE_BAD_DIGEST, "not a lower-case hex SHA-256: " + d);
  std::sort(digests.begin(), digests.end());
  digests.erase(std::unique(digests.begin(), digests.end()), digests.end());
  std::array<std::uint8_t, 16> raw{};
  if (auto s = core::secure_random_bytes(raw); !s) return std::move(s).error();
  ContentLock held;
  held.token_ = core::to_hex(raw);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::milliseconds(2);
  for (;;) {
    auto took = ContentLockAccess::try_take(cat, digests, held.token_, lease);
    if (took) break;
    if (took.error().code != codes::STORE_BUSY) return std::move(took).error();
    if (std::chrono::steady_clock::now() + pause > deadline)
      return make_error(codes::STORE_BUSY,
                        "the content " + took.error().message +
                            " is being stored or removed by someone else; try again");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
  held.cat_ = &cat;
  held.digests_ = std::move(digests);
  return held;
}

std::vector<std::string> remove_orphan_blobs(Catalogue& cat, const BlobStore& blobs,
                                             const std::vector<Asset>& orphans) {
  std::vector<std::string> removed;
  for (const auto& a : orphans) {
    auto lock = lock_content(cat, {a.sha256});
    if (!lock) continue;  // left for the next sweep rather than risk removing a live blob
    auto again = cat.find_asset(a.sha256);
    if (!again) continue;
    if (*again && (*again)->storage_key == a.storage_key) continue;  // uploaded again meanwhile
    if (blobs.remove(a.storage_key)) removed.push_back(a.sha256);
  }
  return removed;
}

}  // namespace charkit::store
