// The crud profile's single-item cache: an item's serialized JSON kept for a fixed time
// from when it was stored (absolute TTL, no refresh), dropped at once by invalidate().
//
// Cache-aside with a guard against a stale fill: a reader that missed takes the shard's
// generation before it queries the database and stores its answer only if no
// invalidation touched the shard since (a PUT that commits between the reader's query
// and its store would otherwise leave the old row cached for a whole TTL).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace arena {

/// Threading: every member may be called from any thread at the same time (one mutex
/// per shard of ids); none suspends.
class item_cache {
 public:
  using clock = std::chrono::steady_clock;
  using body = std::shared_ptr<const std::string>;

  explicit item_cache(std::chrono::milliseconds ttl) : m_ttl(ttl) {}

  /// The body stored for `id`, or null when there is none or it has expired.
  body get(std::int64_t id, clock::time_point now = clock::now());
  /// The generation to pass to put() for a database read about to start.
  std::uint64_t generation(std::int64_t id);
  /// Stores `b` for `id` until now + ttl, unless `id`'s shard was invalidated since
  /// generation() returned `gen` (then the answer may be stale: nothing is stored).
  /// Expired entries of the shard are swept at most once per ttl.
  void put(std::int64_t id, body b, std::uint64_t gen, clock::time_point now = clock::now());
  /// Drops `id`'s entry; a fill already under way for the shard is not stored.
  void invalidate(std::int64_t id);
  /// Entries held (expired ones not swept yet included), a snapshot.
  std::size_t size();

 private:
  struct entry {
    clock::time_point expires;
    body value;
  };
  struct alignas(64) shard {
    std::mutex lock;
    std::unordered_map<std::int64_t, entry> map;  // guarded by lock
    std::uint64_t generation = 0;                 // guarded by lock
    clock::time_point next_sweep{};               // guarded by lock
  };
  shard& shard_of(std::int64_t id) noexcept { return m_shards[static_cast<std::uint64_t>(id) % m_shards.size()]; }
  std::chrono::milliseconds m_ttl;
  std::array<shard, 256> m_shards;
};

}  // namespace arena
