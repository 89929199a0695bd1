#include "item_cache.hpp"

namespace arena {

item_cache::body item_cache::get(std::int64_t id, clock::time_point now) {
  shard& s = shard_of(id);
  std::lock_guard lk(s.lock);
  auto it = s.map.find(id);
  if (it == s.map.end())
    return nullptr;
  if (it->second.expires <= now) {
    s.map.erase(it);
    return nullptr;
  }
  return it->second.value;
}

std::uint64_t item_cache::generation(std::int64_t id) {
  shard& s = shard_of(id);
  std::lock_guard lk(s.lock);
  return s.generation;
}

void item_cache::put(std::int64_t id, body b, std::uint64_t gen, clock::time_point now) {
  shard& s = shard_of(id);
  std::lock_guard lk(s.lock);
  if (s.generation != gen)
    return;
  if (now >= s.next_sweep) {
    std::erase_if(s.map, [now](const auto& kv) { return kv.second.expires <= now; });
    s.next_sweep = now + m_ttl;
  }
  s.map.insert_or_assign(id, entry{now + m_ttl, std::move(b)});
}

void item_cache::invalidate(std::int64_t id) {
  shard& s = shard_of(id);
  std::lock_guard lk(s.lock);
  ++s.generation;
  s.map.erase(id);
}

std::size_t item_cache::size() {
  std::size_t n = 0;
  for (shard& s : m_shards) {
    std::lock_guard lk(s.lock);
    n += s.map.size();
  }
  return n;
}

}  // namespace arena
