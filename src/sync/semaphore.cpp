// saturn::semaphore: a count plus a FIFO of waiters; release() hands units over.
#include <saturn/sync/semaphore.hpp>

#include <mutex>

namespace saturn {

bool semaphore::try_acquire() noexcept {
  std::lock_guard<detail::spin_lock> g(m_lock);
  if (m_count == 0)
    return false;
  --m_count;
  return true;
}

void semaphore::release(std::size_t n) noexcept {
  detail::wake_list woken;  // notifies after the lock is released
  std::lock_guard<detail::spin_lock> g(m_lock);
  for (; n > 0 && !m_waiters.empty(); --n)
    m_waiters.pop_front_into(woken, detail::wait_outcome::ok);
  m_count += n;
}

std::size_t semaphore::available() const noexcept {
  std::lock_guard<detail::spin_lock> g(m_lock);
  return m_count;
}

bool detail::semaphore_awaiter::suspend(promise_base* p) noexcept {
  {
    std::lock_guard<spin_lock> g(m_sem->m_lock);
    if (m_sem->m_count > 0) {
      --m_sem->m_count;
      m_outcome = wait_outcome::ok;
      return false;
    }
    if (!link(m_sem->m_waiters, p))
      return false;
  }
  return park();
}

}  // namespace saturn
