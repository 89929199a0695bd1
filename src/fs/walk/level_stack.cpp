// A worker's levels and their descriptors (level_stack.hpp).
#include "level_stack.hpp"

#include "open_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <saturn/detail/atomic.hpp>
#include <cerrno>

namespace saturn::fs::walk_detail {
namespace {

// EMFILE/ENFILE with nothing of ours left to close: how long open_at waits in all for
// other workers to close descriptors, pausing from the first to the longest pause.
constexpr long k_fd_wait_total_us = 5'000'000;
constexpr long k_fd_pause_first_us = 50;
constexpr long k_fd_pause_max_us = 10'000;
// Set once a wait ran out: later opens that find no descriptor fail at once, so a walk
// without any ends in seconds, not in seconds per directory.
saturn::detail::atomic<bool> g_fd_wait_expired{false};

}  // namespace

void level_stack::push(int fd, bool trusted) {
  try {
    m_levels.push_back(level{.fd = fd, .trusted = trusted});
  } catch (...) {
    ::close(fd);
    throw;
  }
  ++m_open;
}

void level_stack::pop() noexcept {
  const level& l = m_levels.back();
  if (l.sh == nullptr && l.fd >= 0) {
    ::close(l.fd);
    --m_open;
  }
  m_levels.pop_back();
  m_evict_from = std::min(m_evict_from, std::max<std::size_t>(m_levels.size(), 1));
}

void level_stack::share(level& l, shared_dir* sh) noexcept {
  l.sh = sh;
  --m_open;
}

bool level_stack::evict_one(std::size_t pin) noexcept {
  if (m_levels.size() < 2)
    return false;
  const std::size_t top = m_levels.size() - 1;
  bool pin_skipped = false;
  std::size_t i = m_evict_from;
  for (; i < top; ++i) {
    const level& l = m_levels[i];
    if (l.fd < 0 || l.sh != nullptr)
      continue;
    if (i != pin)
      break;
    pin_skipped = true;
  }
  if (i >= top)
    return false;
  m_evict_from = pin_skipped ? pin : i + 1;
  level& l = m_levels[i];
  struct ::stat sb;
  const bool known = ::fstat(l.fd, &sb) == 0;
  l.dev = known ? sb.st_dev : 0;  // unknown: reopening it will take it as gone
  l.ino = known ? sb.st_ino : 0;
  ::close(l.fd);
  l.fd = -1;
  --m_open;
  return true;
}

int level_stack::open_at(int parent, const char* name, bool& trusted, std::size_t pin, bool full_reads,
                         bool same_fs) noexcept {
  long waited_us = 0;
  long pause_us = k_fd_pause_first_us;
  for (;;) {
    const int fd = open_child(parent, name, trusted, full_reads, same_fs);
    if (fd != -EMFILE && fd != -ENFILE)
      return fd;
    if (evict_one(pin))
      continue;
    // ordering: relaxed: a hint; a racing worker waits once more at worst.
    if (g_fd_wait_expired.load(std::memory_order_relaxed))
      return fd;
    if (waited_us >= k_fd_wait_total_us) {
      g_fd_wait_expired.store(true, std::memory_order_relaxed);
      return fd;
    }
    ::usleep(static_cast<::useconds_t>(pause_us));  // other workers close theirs as they go on
    waited_us += pause_us;
    pause_us = std::min(pause_us * 2, k_fd_pause_max_us);
  }
}

int level_stack::reopen_top(name_stack& names, bool full_reads, bool same_fs) noexcept {
  const std::size_t k = top_index();
  std::size_t j = k;
  while (m_levels[j].fd < 0)  // level 0 is never closed
    --j;
  make_room(2, j);  // the next component and the one it is opened from
  int fd = m_levels[j].fd;
  for (std::size_t i = j + 1; i <= k; ++i) {
    bool trusted = false;  // (the level keeps what it had)
    const int next = open_at(fd, name_stack::record_name(names.at(m_levels[i - 1].cur)), trusted, j, full_reads, same_fs);
    if (i > j + 1)
      ::close(fd);
    if (next < 0)
      return next;
    fd = next;
  }
  level& l = m_levels[k];
  struct ::stat sb;
  if (::fstat(fd, &sb) != 0 || sb.st_dev != l.dev || sb.st_ino != l.ino) {
    ::close(fd);
    return -ENOENT;  // another directory by that name: the one listed is gone
  }
  l.fd = fd;
  ++m_open;
  m_evict_from = std::min(m_evict_from, k);
  return fd;
}

std::string level_stack::path(std::size_t k, name_stack& names, const root_paths& paths) {
  // From level 0 (the job's directory, never closed; ROOT itself for the first job), not
  // from the nearest open level: /proc cannot spell a path longer than PATH_MAX, and the
  // names of the levels in between are all here.
  std::string p = paths.of_fd(m_levels[0].fd);
  for (std::size_t i = 1; i <= k; ++i)
    p = join_path(p, name_stack::record_name(names.at(m_levels[i - 1].cur)));
  return p;
}

}  // namespace saturn::fs::walk_detail
