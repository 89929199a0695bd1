/// \file
/// `event`: a manual-reset event for tasks. set() wakes every waiting task; while set, a
/// wait completes at once; reset() makes waits suspend again.
///
/// ```
/// saturn::event ready;
/// // task A:                           // task B, or a plain thread:
/// if (!co_await ready.wait()) ...;     ready.set();
/// ```
#pragma once

#include <saturn/result.hpp>
#include <saturn/sync/detail/waiter.hpp>

#include <coroutine>
#include <cstddef>
#include <type_traits>

namespace saturn {

class event;

namespace detail {
/// The awaiter of event::wait(). It keeps no pointer to its event: waiter::m_list points
/// at the event's list from construction (8 bytes less in every waiting frame,
/// BENCH-CONTRACT spawn/suspended_100k), and the event is found from it.
struct event_awaiter : waiter {
  inline explicit event_awaiter(event* e) noexcept;
  bool await_ready() noexcept;
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::event::wait() must be awaited from a saturn::task");
    return suspend(&h.promise());
  }
  wait_result await_resume() noexcept {
    unpark();
    return to_wait_result(wait_op::event_wait);
  }
  bool suspend(promise_base* p) noexcept;
  /// The event awaited (from m_list, set by the constructor; valid until await_resume).
  event& owner() const noexcept;
};
}  // namespace detail

/// A manual-reset event.
///
/// Threading: set(), reset() and is_set() may be called from any thread, including plain
/// OS threads (a task waiting on another thread's runtime is woken through that runtime's
/// remote queue); none of them suspends or blocks beyond a short internal lock. wait() is
/// awaited from a saturn task. Lifetime: see saturn/sync/detail/waiter.hpp — the event
/// must outlive the awaits on it.
class event {
 public:
  /// An event that starts set when `initially_set`.
  explicit event(bool initially_set = false) noexcept : m_set(initially_set) {}
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  /// Sets the event and wakes every waiting task (in the order they began waiting). Any
  /// thread; idempotent.
  void set() noexcept;
  /// Clears the event; later waits suspend until the next set(). Tasks already woken by a
  /// set() stay woken. Any thread.
  void reset() noexcept;
  /// True while the event is set (a snapshot). Any thread.
  bool is_set() const noexcept {
    // ordering: acquire pairs with set()'s release: a task that sees the event set also
    // sees everything written before set().
    return m_set.load(std::memory_order_acquire);
  }

  /// `co_await ev.wait()` suspends the task until the event is set; completes at once if
  /// it is set. Returns a wait_result: ok, or std::errc::operation_canceled when the
  /// task's stop token stopped the wait first. Await from a saturn task, directly (the
  /// awaiter is single use); allocates nothing.
  [[nodiscard]] detail::event_awaiter wait() noexcept { return detail::event_awaiter(this); }

 private:
  friend struct detail::event_awaiter;
  detail::spin_lock m_lock;
  detail::atomic<bool> m_set;  ///< written under m_lock, read anywhere
  detail::waiter_list m_waiters{m_lock};
};

inline detail::event_awaiter::event_awaiter(event* e) noexcept { m_list = &e->m_waiters; }

inline event& detail::event_awaiter::owner() const noexcept {
  static_assert(std::is_standard_layout_v<event>, "event_awaiter finds its event from the waiter list's offset");
  return *reinterpret_cast<event*>(reinterpret_cast<char*>(m_list) - offsetof(event, m_waiters));
}

inline bool detail::event_awaiter::await_ready() noexcept {
  if (!owner().is_set())
    return false;
  m_outcome = wait_outcome::ok;
  return true;
}

}  // namespace saturn
