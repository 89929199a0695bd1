/// \file
/// `from_task(t)`: a `task<T>` as an effect. Starting it runs the task (inline, on the
/// starting thread) under a context whose stop token is the environment's, so a stop of
/// the pipeline (when_any, with_timeout, the caller's token) cancels the task's awaits
/// exactly as tier B's combinators do. A task ending with `result<U>` holding an error
/// completes the effect with that error (value type U); an exception becomes a failure.
///
/// Cost: the task's own frame plus one small driver frame (a coroutine that awaits the task
/// and calls the receiver), both from the frame allocator.
#pragma once

#include <saturn/effect/core.hpp>
#include <saturn/task/detail/promise_base.hpp>
#include <saturn/task/task.hpp>

#include <cassert>
#include <coroutine>
#include <exception>

namespace saturn::effect {
namespace detail {

/// A fire-and-forget coroutine that frees itself at its end (suspend_never), with a saturn
/// promise so the task it awaits inherits its context.
struct driver {
  struct promise_type : saturn::detail::promise_base {
    promise_type() noexcept { m_fn = &saturn::detail::resume_from_queue<promise_type>; }
    driver get_return_object() noexcept { return driver{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }  // the body catches everything
  };
  std::coroutine_handle<promise_type> m_h;
};

template <class T>
struct task_value {
  using type = T;
  static constexpr bool is_result = false;
};
template <class U>
struct task_value<result<U>> {
  using type = U;
  static constexpr bool is_result = true;
};

template <class T, class R>
class from_task_op {
  using info = task_value<T>;
  using V = typename info::type;

 public:
  from_task_op(task<T> t, R r) : m_task(std::move(t)), m_r(std::move(r)) {}
  from_task_op(const from_task_op&) = delete;
  from_task_op& operator=(const from_task_op&) = delete;
  ~from_task_op() {
    if (m_driver)
      m_driver.destroy();  // never started (a started driver frees itself)
  }

  void start() noexcept {
    const env e = m_r.get_env();
    scheduler* s = e.sched != nullptr ? e.sched : scheduler::current();
    if (s == nullptr) {
      m_r.set_error(error{std::make_error_code(std::errc::operation_not_permitted), "from_task (start it inside a runtime)"});
      return;
    }
    m_ctx.sched = s;
    m_ctx.token = e.token != nullptr ? *e.token : std::stop_token{};
    m_ctx.live = s->root_context().live;
    try {
      m_driver = drive(std::move(m_task), this).m_h;
    } catch (...) {
      m_r.set_error(failure(std::current_exception()));
      return;
    }
    auto h = std::exchange(m_driver, {});
    h.promise().m_ctx = &m_ctx;
    h.resume();  // lifetime: from here the driver owns itself; it calls m_r last
  }

 private:
  static driver drive(task<T> t, from_task_op* self) {
    try {
      if constexpr (std::is_void_v<T>) {
        co_await std::move(t);
        self->m_r.set_value();
      } else if constexpr (info::is_result) {
        T r = co_await std::move(t);
        if (!r)
          self->m_r.set_error(r.err());
        else if constexpr (std::is_void_v<V>)
          self->m_r.set_value();
        else
          self->m_r.set_value(std::move(*r));
      } else {
        self->m_r.set_value(co_await std::move(t));
      }
    } catch (...) {
      self->m_r.set_error(failure(std::current_exception()));
    }
  }

  task<T> m_task;
  R m_r;
  task_context m_ctx;
  std::coroutine_handle<driver::promise_type> m_driver{};
};

}  // namespace detail

/// The effect of a `task<T>` (value type T, or U for T = `result<U>`).
template <class T>
struct task_effect : effect_base<task_effect<T>> {
  using value_type = typename detail::task_value<T>::type;
  static constexpr bool completes_inline = false;
  task<T> m_task;
  explicit task_effect(task<T> t) : m_task(std::move(t)) {}
  template <class R>
  detail::from_task_op<T, R> connect(R r) && {
    return detail::from_task_op<T, R>(std::move(m_task), std::move(r));
  }
};

/// Turns a task into an effect. The task runs when the effect is started, under the
/// starter's scheduler (or the calling thread's) and the environment's stop token.
template <class T>
task_effect<T> from_task(task<T> t) {
  return task_effect<T>(std::move(t));
}

}  // namespace saturn::effect
