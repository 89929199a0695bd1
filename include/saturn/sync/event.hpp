/// \file
/// `event`: a manual-reset event for tasks. set() wakes every waiting task; while set, a
/// wait completes at once; reset() makes waits suspend again.
///
/// ```
/// saturn::event ready;
/// if (auto r = co_await ready.wait(); !r) co_return;   // task A (!r: cancelled)
/// ready.set();                                         // task B, or a plain thread
/// ```
#pragma once

#include <saturn/result.hpp>
#include <saturn/sync/detail/task_wait.hpp>
#include <saturn/sync/wait_result.hpp>

#include <coroutine>
#include <type_traits>

namespace saturn {

namespace detail {

/// The state of an event (and of a latch's gate): a flag and the tasks waiting for it,
/// both under one spin lock.
///
/// Threading: set(), reset(), is_set() from any thread; suspend() from the waiting task.
class event_core {
 public:
  explicit event_core(bool initially_set) noexcept : m_set(initially_set) {}
  event_core(const event_core&) = delete;
  event_core& operator=(const event_core&) = delete;

  void set() noexcept;
  void reset() noexcept;
  bool is_set() const noexcept {
    // ordering: acquire pairs with set()'s release: a task that sees the event set also
    // sees everything written before set().
    return m_set.load(std::memory_order_acquire);
  }
  /// await_suspend's work (a task_wait): false when the wait is over without suspending
  /// (set, or the task's stop token stopped).
  bool suspend(promise_base* p) noexcept;

 private:
  spin_lock m_lock;
  atomic<bool> m_set;  ///< written under m_lock, read anywhere
  task_wait_list m_waiters{m_lock};
};

/// What wait() hands its awaiter: the event, and the awaiter it was handed to.
struct pending_event_wait {
  event_core* event;
  const void* awaiter;
};
/// wait() -> await_ready / await_suspend, on the awaiting thread (see event_awaiter).
extern constinit thread_local pending_event_wait t_pending_event_wait;
/// An event_awaiter awaited other than at once (see event_awaiter): aborts with a message.
[[noreturn]] void event_awaiter_misused() noexcept;

/// The awaiter of event::wait() and latch::wait(). It is empty, so a frame waiting on an
/// event holds nothing for the wait: the wait's node is in the promise (task_wait), and
/// the event comes from wait() through a thread-local, read by await_ready and
/// await_suspend, which run right after it. Keeping the event pointer in the awaiter
/// would cost 8 bytes in every waiting frame, and a reference awaiter does not help:
/// g++ 12 copies what a function returns by reference into the frame
/// (docs/decisions/task-frame-size.md). So await it at once, as
/// `co_await ev.wait()`; an awaiter kept while another wait() is made is detected by its
/// address and aborts. `Op` names the wait in a canceled result (event_wait, latch_wait).
///
/// Threading: the awaiting task's thread. Not copyable or movable.
template <wait_op Op>
class [[nodiscard]] event_awaiter {
 public:
  explicit event_awaiter(event_core* e) noexcept { t_pending_event_wait = {e, this}; }
  event_awaiter(const event_awaiter&) = delete;
  event_awaiter& operator=(const event_awaiter&) = delete;

  bool await_ready() noexcept {
    if (!pending().is_set())
      return false;
    t_pending_event_wait = {};
    t_running = nullptr;  // tells await_resume: completed here
    return true;
  }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::event::wait() must be awaited from a saturn::task");
    event_core& e = pending();
    t_pending_event_wait = {};
    promise_base* p = &h.promise();
    if (e.suspend(p))
      return true;
    t_running = p;  // going on at once: await_resume finds its task here, as after a wake
    return false;
  }
  wait_result await_resume() noexcept {
    promise_base* p = resumed_task();
    if (p != nullptr && task_wait_finish(p))
      return wait_result::canceled(Op);
    return {};
  }

 private:
  event_core& pending() const noexcept {
    const pending_event_wait& w = t_pending_event_wait;
    if (w.awaiter != this) [[unlikely]]
      event_awaiter_misused();
    return *w.event;
  }
};

}  // namespace detail

/// A manual-reset event.
///
/// Threading: set(), reset() and is_set() may be called from any thread, including plain
/// OS threads (a task waiting on another thread's runtime is woken through that runtime's
/// remote queue); none of them suspends or blocks beyond a short internal lock. wait() is
/// awaited from a saturn task. Lifetime: see saturn/sync/detail/task_wait.hpp — the event
/// must outlive the awaits on it.
class event {
 public:
  /// An event that starts set when `initially_set`.
  explicit event(bool initially_set = false) noexcept : m_core(initially_set) {}
  event(const event&) = delete;
  event& operator=(const event&) = delete;

  /// Sets the event and wakes every waiting task (in the order they began waiting). Any
  /// thread; idempotent.
  void set() noexcept { m_core.set(); }
  /// Clears the event; later waits suspend until the next set(). Tasks already woken by a
  /// set() stay woken. Any thread.
  void reset() noexcept { m_core.reset(); }
  /// True while the event is set (a snapshot). Any thread.
  bool is_set() const noexcept { return m_core.is_set(); }
  /// `co_await ev.wait()` suspends the task until the event is set; completes at once if
  /// it is set. Returns a wait_result: ok, or std::errc::operation_canceled when the
  /// task's stop token stopped the wait first. Await it at once (`co_await ev.wait()`),
  /// from a saturn task; allocates nothing, and the waiting frame keeps nothing for it
  /// (see detail::event_awaiter).
  detail::event_awaiter<wait_op::event_wait> wait() noexcept { return detail::event_awaiter<wait_op::event_wait>(&m_core); }

 private:
  detail::event_core m_core;
};

}  // namespace saturn
