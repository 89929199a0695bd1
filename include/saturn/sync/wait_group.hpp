/// \file
/// `wait_group`: Go's sync.WaitGroup for tasks. add(n) before starting n pieces of work,
/// done() as each ends, `co_await wg.wait()` until the count is back to zero. Unlike a
/// latch it can be reused: the count may rise again after reaching zero.
///
/// ```
/// saturn::wait_group wg;
/// for (auto& job : jobs) { wg.add(1); saturn::spawn(run(job, wg)).detach(); }  // run calls wg.done()
/// auto all_done = co_await wg.wait();   // or cancelled
/// ```
#pragma once

#include <saturn/result.hpp>
#include <saturn/sync/detail/waiter.hpp>

#include <coroutine>
#include <cstddef>

namespace saturn {

class wait_group;

namespace detail {
struct wait_group_awaiter : waiter {
  wait_group* m_group;
  explicit wait_group_awaiter(wait_group* g) noexcept : m_group(g) {}
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::wait_group::wait() must be awaited from a saturn::task");
    return suspend(&h.promise());
  }
  wait_result await_resume() noexcept {
    unpark();
    return to_wait_result(wait_op::wait_group_wait);
  }
  bool suspend(promise_base* p) noexcept;
};
}  // namespace detail

/// A counter of outstanding work that tasks can wait on.
///
/// Threading: add(), done() and count() may be called from any thread, including plain OS
/// threads; wait() is awaited from a saturn task. A count below zero is a programming
/// error: the process aborts with a message (as Go panics). As in Go, an add() that starts
/// a new round must happen after the previous round's waits have begun or returned.
/// Lifetime: see saturn/sync/detail/waiter.hpp.
class wait_group {
 public:
  wait_group() noexcept = default;
  wait_group(const wait_group&) = delete;
  wait_group& operator=(const wait_group&) = delete;

  /// Adds `delta` (may be negative) to the count; reaching zero wakes every waiter. Any
  /// thread; never suspends.
  void add(std::ptrdiff_t delta) noexcept;
  /// add(-1): one piece of work has finished.
  void done() noexcept { add(-1); }
  /// The current count (a snapshot). Any thread.
  std::ptrdiff_t count() const noexcept;
  /// `co_await wg.wait()` suspends until the count is zero (at once if it is). Returns ok,
  /// or std::errc::operation_canceled if the task's stop token stopped the wait first.
  /// Await from a saturn task, directly.
  [[nodiscard]] detail::wait_group_awaiter wait() noexcept { return detail::wait_group_awaiter(this); }

 private:
  friend struct detail::wait_group_awaiter;
  mutable detail::spin_lock m_lock;
  std::ptrdiff_t m_count = 0;  ///< guarded by m_lock
  detail::waiter_list m_waiters{m_lock};
};

}  // namespace saturn
