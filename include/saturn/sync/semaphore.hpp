/// \file
/// `semaphore`: a counting semaphore for tasks. acquire() takes one unit, suspending while
/// none is free; release(n) hands units straight to the oldest waiters (FIFO), the rest
/// go back to the count.
///
/// ```
/// saturn::semaphore slots(4);             // at most 4 tasks inside at once
/// if (auto r = co_await slots.acquire(); !r) co_return;
/// /* ... */
/// slots.release();
/// ```
#pragma once

#include <saturn/result.hpp>
#include <saturn/sync/detail/waiter.hpp>

#include <coroutine>
#include <cstddef>

namespace saturn {

class semaphore;

namespace detail {
struct semaphore_awaiter : waiter {
  semaphore* m_sem;
  explicit semaphore_awaiter(semaphore* s) noexcept : m_sem(s) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::semaphore::acquire() must be awaited from a saturn::task");
    return suspend(&h.promise());
  }
  wait_result await_resume() noexcept {
    unpark();
    return to_wait_result(wait_op::semaphore_acquire);
  }
  bool suspend(promise_base* p) noexcept;
};
}  // namespace detail

/// A counting semaphore with FIFO hand-off.
///
/// Threading: release(), try_acquire() and available() may be called from any thread,
/// including plain OS threads; acquire() is awaited from a saturn task and suspends the
/// task, never the thread. Lifetime: see saturn/sync/detail/waiter.hpp.
class semaphore {
 public:
  /// A semaphore holding `initial` units.
  explicit semaphore(std::size_t initial = 0) noexcept : m_count(initial) {}
  semaphore(const semaphore&) = delete;
  semaphore& operator=(const semaphore&) = delete;

  /// `co_await s.acquire()` takes one unit, suspending until one is released to this task
  /// (oldest waiter first). Returns ok (the task owns a unit), or
  /// std::errc::operation_canceled if the task's stop token stopped the wait before a unit
  /// was handed over (then it owns none). Await from a saturn task, directly.
  [[nodiscard]] detail::semaphore_awaiter acquire() noexcept { return detail::semaphore_awaiter(this); }
  /// Takes a unit if one is free; never waits. Any thread.
  bool try_acquire() noexcept;
  /// Returns `n` units: each wakes the oldest waiter, the rest add to the count. Any thread.
  void release(std::size_t n = 1) noexcept;
  /// Units free right now (a snapshot). Any thread.
  std::size_t available() const noexcept;

 private:
  friend struct detail::semaphore_awaiter;
  mutable detail::spin_lock m_lock;
  std::size_t m_count;  ///< guarded by m_lock; non-zero only while nobody waits
  detail::waiter_list m_waiters{m_lock};
};

}  // namespace saturn
