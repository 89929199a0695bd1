// saturn::event: a flag plus a list of parked waiters, both under one spin lock.
#include <saturn/sync/event.hpp>

#include <mutex>

namespace saturn {

void event::set() noexcept {
  detail::wake_list woken;  // notifies after the lock is released
  std::lock_guard<detail::spin_lock> g(m_lock);
  // ordering: release pairs with is_set()'s acquire (the lock orders it for waiters).
  m_set.store(true, std::memory_order_release);
  m_waiters.pop_all_into(woken, detail::wait_outcome::ok);
}

void event::reset() noexcept {
  std::lock_guard<detail::spin_lock> g(m_lock);
  // ordering: relaxed: the flag only gates new waits, which re-check it under the lock.
  m_set.store(false, std::memory_order_relaxed);
}

bool detail::event_awaiter::suspend(promise_base* p) noexcept {
  event& ev = owner();
  {
    std::lock_guard<spin_lock> g(ev.m_lock);
    // ordering: relaxed under the lock, which orders it with set().
    if (ev.m_set.load(std::memory_order_relaxed)) {
      m_outcome = wait_outcome::ok;
      return false;
    }
    if (!link(ev.m_waiters, p))
      return false;
  }
  return park();
}

}  // namespace saturn
