// saturn::event: a flag plus the tasks waiting for it (a task_wait_list), under one spin lock.
#include <saturn/sync/event.hpp>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace saturn::detail {

constinit thread_local pending_event_wait t_pending_event_wait{};

void event_awaiter_misused() noexcept {
  std::fprintf(stderr, "saturn: an event or latch wait() was not awaited at once: write "
                       "`co_await ev.wait()`, not an awaiter kept while another wait() is made\n");
  std::abort();
}

void event_core::set() noexcept {
  task_wake_list woken;  // notifies after the lock is released
  std::lock_guard<spin_lock> g(m_lock);
  // ordering: release pairs with is_set()'s acquire (the lock orders it for waiters).
  m_set.store(true, std::memory_order_release);
  m_waiters.pop_all_into(woken);
}

void event_core::reset() noexcept {
  std::lock_guard<spin_lock> g(m_lock);
  // ordering: relaxed: the flag only gates new waits, which re-check it under the lock.
  m_set.store(false, std::memory_order_relaxed);
}

bool event_core::suspend(promise_base* p) noexcept {
  {
    std::lock_guard<spin_lock> g(m_lock);
    // ordering: relaxed under the lock, which orders it with set().
    if (m_set.load(std::memory_order_relaxed))
      return false;  // ok: no wait bits recorded
    if (p->token().stop_requested()) {
      // ordering: relaxed; read back by this task in await_resume.
      p->m_join.fetch_or(wait_canceled, std::memory_order_relaxed);
      return false;
    }
    m_waiters.push_back(p);
  }
  return task_wait_park(p, &m_waiters);
}

}  // namespace saturn::detail
