/// \file
/// Time for tasks: sleep_for, sleep_until, with_timeout. Timers live in the loop's timer
/// heap (one kernel wait covers the nearest), so a sleep allocates nothing and costs no
/// kernel timer of its own. A sleep never ends before its deadline.
#pragma once

#include <saturn/result.hpp>
#include <saturn/task/detail/cancellable.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/this_task.hpp>

#include <functional>
#include <atomic>
#include <optional>

namespace saturn {
namespace detail {

struct sleep_awaiter : timer_node, cancellable<sleep_awaiter> {
  clock::time_point m_until;
  bool m_canceled = false;

  explicit sleep_awaiter(clock::time_point until) noexcept : m_until(until) { m_fire = &fire; }

  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    static_assert(saturn_promise<P>, "saturn sleeps must be awaited from a saturn::task");
    promise_base* p = &h.promise();
    if (p->token().stop_requested()) {
      m_canceled = true;
      return false;
    }
    event_loop* loop = event_loop::current();
    loop->add_timer(this, m_until);
    arm_cancellation(p, loop);
    return true;
  }
  result<void> await_resume() noexcept {
    disarm_cancellation();
    if (m_canceled)
      return error{std::make_error_code(std::errc::operation_canceled), "sleep"};
    return {};
  }

  static void fire(timer_node* t, run_mode mode) noexcept {
    auto* self = static_cast<sleep_awaiter*>(t);
    if (mode == run_mode::run && self->complete_may_resume())
      self->m_promise->wake();
  }
  void cancel_now() noexcept {
    if (m_loop->cancel_timer(this)) {
      m_canceled = true;
      m_promise->wake();
    }
  }
};

/// Awaits a task under another context (used by with_timeout, when_any, task groups).
template <class T>
struct in_context_awaiter {
  std::coroutine_handle<task_promise<T>> m_h;
  task_context* m_ctx;
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
    m_h.promise().m_continuation = caller;
    m_h.promise().m_ctx = m_ctx;
    return m_h;
  }
  T await_resume() { return m_h.promise().take(); }
};

template <class T>
result<T> timed_out_result() {
  return error{std::make_error_code(std::errc::timed_out), "with_timeout"};
}

}  // namespace detail

/// Suspends the task until `deadline` (never earlier). Cancellable by the task's stop
/// token: then the result is std::errc::operation_canceled.
inline detail::sleep_awaiter sleep_until(clock::time_point deadline) noexcept { return detail::sleep_awaiter(deadline); }

/// Suspends the task for at least `d`.
inline detail::sleep_awaiter sleep_for(std::chrono::nanoseconds d) noexcept {
  return detail::sleep_awaiter(clock::now() + d);
}

namespace detail {

/// with_timeout's deadline: a loop timer that requests a stop when it fires. Heap-allocated
/// and reference-counted (the with_timeout frame and the armed timer each hold a ref),
/// because the task may end on another worker than the one whose loop holds the timer:
/// then the disarm travels to that loop through its inbox, and the frame need not wait.
struct deadline_timer : timer_node {
  std::stop_source source;  // a handle: a fire after the frame is gone is harmless
  event_loop* loop = nullptr;
  std::atomic<bool> fired{false};
  std::atomic<int> refs{2};
  struct disarm_node : runnable {
    deadline_timer* self;
  } disarm;

  void release() noexcept {
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"  // g++ 12 false positive under -fsanitize
#endif
    // ordering: acq_rel so the last owner sees every other owner's writes before freeing.
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  }
  static void fire(timer_node* n, run_mode mode) noexcept {
    auto* self = static_cast<deadline_timer*>(n);
    if (mode == run_mode::run) {
      self->fired.store(true, std::memory_order_release);
      self->source.request_stop();
    }
    self->release();  // the timer's ref
  }
  static void run_disarm(runnable* r, run_mode) noexcept {
    deadline_timer* self = static_cast<disarm_node*>(r)->self;
    if (self->loop->cancel_timer(self))
      self->release();  // the timer's ref: it will never fire now
    self->release();    // the frame's ref, handed over with the request
  }
  /// Called by the frame when it is done with the deadline (any thread).
  void finish() noexcept {
    if (event_loop::current() == loop) {
      if (loop->cancel_timer(this))
        release();
      release();
      return;
    }
    disarm.self = this;
    disarm.m_fn = &run_disarm;
    loop->post_remote(&disarm);
  }
};

template <class T>
struct is_result : std::false_type {};
template <class U>
struct is_result<result<U>> : std::true_type {};

}  // namespace detail

/// Runs `t` with a deadline `d` from now. If `t` finishes first, its value. Otherwise `t`
/// is cancelled through its stop token (its in-flight I/O is cancelled in the kernel) and
/// awaited until it has really ended; the result is then std::errc::timed_out — unless `t`
/// still produced a value: a T that is not a result<...>, or a result<...> holding a value
/// or an error other than operation_canceled, is returned as is, so nothing that was
/// computed (a message received just before the stop, say) is lost. A stop requested on
/// the caller's own token is passed on to `t`. Exceptions of `t` propagate.
/// Threading: await from a saturn task; it may end on another worker than it began.
template <class T>
task<result<T>> with_timeout(std::chrono::nanoseconds d, task<T> t) {
  task_context& parent = co_await this_task::context();
  auto* deadline = new detail::deadline_timer;
  deadline->m_fire = &detail::deadline_timer::fire;
  deadline->loop = event_loop::current();
  std::stop_source source = deadline->source;
  std::optional<std::stop_callback<std::function<void()>>> chain;
  if (parent.token.stop_possible())
    chain.emplace(parent.token, [source]() mutable { source.request_stop(); });
  task_context ctx{parent.sched, source.get_token(), parent.live};
  deadline->loop->add_timer(deadline, clock::now() + d);
  struct finish_guard {
    detail::deadline_timer* t;
    ~finish_guard() { t->finish(); }
  } guard{deadline};

  auto h = t.handle();
  if constexpr (std::is_void_v<T>) {
    co_await detail::in_context_awaiter<T>{h, &ctx};
    if (deadline->fired.load(std::memory_order_acquire))
      co_return detail::timed_out_result<T>();
    co_return result<void>{};
  } else {
    T value = co_await detail::in_context_awaiter<T>{h, &ctx};
    if (deadline->fired.load(std::memory_order_acquire)) {
      if constexpr (detail::is_result<T>::value) {
        if (!value.has_value() && value.code() == std::make_error_condition(std::errc::operation_canceled))
          co_return detail::timed_out_result<T>();
      }
    }
    co_return result<T>(std::move(value));
  }
}

}  // namespace saturn
