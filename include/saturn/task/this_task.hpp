/// \file
/// Awaitables that talk to the running task itself: yield(), and reading its context
/// (scheduler and stop token). None of them allocates.
#pragma once

#include <saturn/task/detail/promise_base.hpp>

#include <coroutine>
#include <stop_token>

namespace saturn {
namespace detail {

struct yield_awaiter {
  bool await_ready() const noexcept { return false; }
  template <class P>
  void await_suspend(std::coroutine_handle<P> h) const noexcept {
    static_assert(saturn_promise<P>, "saturn::yield() must be awaited from a saturn::task");
    h.promise().sched()->yield(&h.promise());  // behind everything ready now
  }
  void await_resume() const noexcept {}
};

struct context_awaiter {
  task_context* m_ctx = nullptr;
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn_promise<P>, "saturn::this_task must be awaited from a saturn::task");
    m_ctx = h.promise().m_ctx;
    return false;  // never suspends
  }
  task_context& await_resume() const noexcept { return *m_ctx; }
};

}  // namespace detail

/// Lets every other ready task run, then continues. Threading: any saturn task.
inline detail::yield_awaiter yield() noexcept { return {}; }

namespace this_task {
/// The running task's context (`co_await this_task::context()`); never suspends.
inline detail::context_awaiter context() noexcept { return {}; }
}  // namespace this_task

}  // namespace saturn
