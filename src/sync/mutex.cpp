// saturn::mutex: a held flag plus a FIFO of waiters; unlock() hands the lock over.
#include <saturn/sync/mutex.hpp>

#include <mutex>

namespace saturn {

std::optional<mutex::guard> mutex::try_lock() noexcept {
  std::lock_guard<detail::spin_lock> g(m_lock);
  if (m_locked)
    return std::nullopt;
  m_locked = true;
  return guard(this);
}

void mutex::unlock() noexcept {
  detail::wake_list woken;  // notifies after the lock is released
  std::lock_guard<detail::spin_lock> g(m_lock);
  if (m_waiters.empty())
    m_locked = false;
  else  // hand-off: m_locked stays true, the oldest waiter is the new holder
    m_waiters.pop_front_into(woken, detail::wait_outcome::ok);
}

bool mutex::is_locked() const noexcept {
  std::lock_guard<detail::spin_lock> g(m_lock);
  return m_locked;
}

bool detail::mutex_awaiter::suspend(promise_base* p) noexcept {
  {
    std::lock_guard<spin_lock> g(m_mutex->m_lock);
    if (!m_mutex->m_locked) {
      m_mutex->m_locked = true;
      m_outcome = wait_outcome::ok;
      return false;
    }
    if (!link(m_mutex->m_waiters, p))
      return false;
  }
  return park();
}

}  // namespace saturn
