// saturn::wait_group: a count plus the tasks waiting for it to reach zero.
#include <saturn/sync/wait_group.hpp>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace saturn {

void wait_group::add(std::ptrdiff_t delta) noexcept {
  detail::wake_list woken;  // notifies after the lock is released
  std::lock_guard<detail::spin_lock> g(m_lock);
  m_count += delta;
  if (m_count < 0) {
    std::fprintf(stderr, "saturn::wait_group: negative counter (%td): done() was called more often than add() "
                 "counted\n", m_count);
    std::abort();
  }
  if (m_count == 0)
    m_waiters.pop_all_into(woken, detail::wait_outcome::ok);
}

std::ptrdiff_t wait_group::count() const noexcept {
  std::lock_guard<detail::spin_lock> g(m_lock);
  return m_count;
}

bool detail::wait_group_awaiter::suspend(promise_base* p) noexcept {
  {
    std::lock_guard<spin_lock> g(m_group->m_lock);
    if (m_group->m_count == 0) {
      m_outcome = wait_outcome::ok;
      return false;
    }
    if (!link(m_group->m_waiters, p))
      return false;
  }
  return park();
}

}  // namespace saturn
