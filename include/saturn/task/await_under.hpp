/// \file
/// `await_under(t, ctx)`: awaits a task under a context other than the caller's — its own
/// stop token (a deadline's, a group's, one that never fires), the same scheduler. What
/// with_timeout, task groups and a server's per-request scope are built from.
#pragma once

#include <saturn/task/scheduler.hpp>
#include <saturn/task/task.hpp>

#include <coroutine>

namespace saturn {
namespace detail {

/// The awaiter await_under returns: starts the task with `m_ctx` as its context and
/// resumes the caller when it ends. Trivially destructible (g++ 12 may destroy an awaiter
/// temporary in a co_await operand twice).
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

}  // namespace detail

/// `co_await await_under(t, ctx)` runs the not-yet-started task `t` to its end with `ctx`
/// as its context — its stop token is `ctx.token`, not the caller's — and gives its result
/// (an exception it threw is rethrown).
///
/// Threading: from a saturn task; suspends the caller until `t` ends. `t` and `ctx` must
/// outlive the await (keep them in the caller's frame). Cancellation: the caller's own
/// stop token does not reach `t`; only `ctx.token` does (chain the two yourself if both
/// should, as with_timeout does). `t` must not have been awaited or spawned before.
template <class T>
[[nodiscard]] detail::in_context_awaiter<T> await_under(task<T>& t, task_context& ctx) noexcept {
  return detail::in_context_awaiter<T>{t.handle(), &ctx};
}

}  // namespace saturn
