// static_files' in-memory copies of small files (static_detail.hpp).
#include "http/static_detail.hpp"

namespace saturn::http {

namespace detail {

std::optional<static_cache::entry> static_cache::find(const std::string& path) const {
  std::lock_guard lock(m_mu);
  auto it = m_entries.find(path);
  if (it == m_entries.end())
    return std::nullopt;
  return it->second;
}

void static_cache::confirm(const std::string& path, std::uint64_t size, std::int64_t mtime_ns,
                           clock::time_point now) {
  std::lock_guard lock(m_mu);
  auto it = m_entries.find(path);
  if (it == m_entries.end())
    return;
  if (it->second.size == size && it->second.mtime_ns == mtime_ns) {
    it->second.checked = now;
    return;
  }
  m_used -= it->second.size;
  m_entries.erase(it);
}

void static_cache::erase(const std::string& path) {
  std::lock_guard lock(m_mu);
  auto it = m_entries.find(path);
  if (it == m_entries.end())
    return;
  m_used -= it->second.size;
  m_entries.erase(it);
}

void static_cache::put(const std::string& path, std::string name, std::shared_ptr<const std::string> bytes,
                       std::int64_t mtime_ns, clock::time_point now) {
  std::lock_guard lock(m_mu);
  auto it = m_entries.find(path);
  if (it != m_entries.end()) {
    m_used -= it->second.size;
    m_entries.erase(it);
  }
  const std::size_t size = bytes->size();
  if (size > m_budget - m_used)
    return;  // full: served from disk (entries leave only when their file changes)
  m_used += size;
  m_entries.emplace(path, entry{std::move(name), std::move(bytes), size, mtime_ns, now});
}

}  // namespace detail

}  // namespace saturn::http
