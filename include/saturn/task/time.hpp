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

/// Runs `t` with a deadline `d` from now. If `t` finishes first, its value; otherwise the
/// task is cancelled through its stop token (its in-flight I/O is cancelled in the
/// kernel), awaited until it has really ended, and the result is std::errc::timed_out.
/// A stop requested on the caller's own token is passed on to `t`. Exceptions of `t`
/// propagate. Threading: await from a saturn task.
template <class T>
task<result<T>> with_timeout(std::chrono::nanoseconds d, task<T> t) {
  task_context& parent = co_await this_task::context();
  std::stop_source source;
  std::optional<std::stop_callback<std::function<void()>>> chain;
  if (parent.token.stop_possible())
    chain.emplace(parent.token, [&source] { source.request_stop(); });
  task_context ctx{parent.sched, source.get_token()};

  struct deadline_timer : timer_node {
    std::stop_source* src;
    bool fired = false;
    static void fire(timer_node* n, run_mode mode) noexcept {
      auto* self = static_cast<deadline_timer*>(n);
      if (mode == run_mode::run) {
        self->fired = true;
        self->src->request_stop();
      }
    }
  } timer;
  timer.src = &source;
  timer.m_fire = &deadline_timer::fire;
  event_loop* loop = event_loop::current();
  loop->add_timer(&timer, clock::now() + d);
  struct disarm {
    event_loop* l;
    timer_node* t;
    ~disarm() { l->cancel_timer(t); }
  } guard{loop, &timer};

  auto h = t.handle();
  if constexpr (std::is_void_v<T>) {
    co_await detail::in_context_awaiter<T>{h, &ctx};
    if (timer.fired)
      co_return detail::timed_out_result<T>();
    co_return result<void>{};
  } else {
    T value = co_await detail::in_context_awaiter<T>{h, &ctx};
    if (timer.fired)
      co_return detail::timed_out_result<T>();
    co_return result<T>(std::move(value));
  }
}

}  // namespace saturn
