/// \file
/// `child_driver`: the tiny coroutine that runs one child of a structured scope
/// (when_all, when_any, task_group). A child task's continuation must be a coroutine; the
/// driver is that coroutine: it starts the child under the scope's context, and when the
/// child ends (its final_awaiter transfers back here) it reports to the scope from its own
/// final suspend point — where the scope decides what runs next (the parent, or nothing).
///
/// The driver is queued with scheduler::spawn(), so children interleave with each other
/// and with the parent, and a work-stealing scheduler may run them on other workers. The
/// child's outcome stays in the child's own promise (no copy through the driver).
#pragma once

#include <saturn/task/detail/promise_base.hpp>
#include <saturn/task/task.hpp>

#include <coroutine>
#include <cstddef>
#include <exception>
#include <functional>
#include <type_traits>
#include <utility>
#include <variant>

namespace saturn::detail {

struct child_promise;
class child_driver;

/// What a scope exposes to its children's drivers.
struct child_scope {
  /// Called once per child, on the thread the child ended on, from the driver's final
  /// suspend point. Returns the coroutine to run next on this thread (symmetric transfer).
  using done_fn = std::coroutine_handle<> (*)(child_scope* self, std::coroutine_handle<child_promise> driver) noexcept;
  done_fn m_on_child_done = nullptr;
};

/// Promise of a child driver. Threading: like any task, runs on one thread at a time.
struct child_promise final : promise_base {
  child_scope* m_scope = nullptr;
  std::size_t m_index = 0;                       ///< the child's position in its scope
  const promise_base* m_child = nullptr;          ///< the child, whose outcome stays in its promise
  // lifetime: a copy of the scope's context, so the child (and everything it awaits) never
  // points into the scope's frame — which matters when a runtime shutdown destroys a
  // suspended group child after its group.
  task_context m_own_ctx{};

  child_promise() noexcept { m_fn = &resume_from_queue<child_promise>; }

  /// The child's exception, or null when it did not fail. After the child ended.
  std::exception_ptr child_error() const noexcept { return m_child->has_failed() ? *m_child->exception_slot() : nullptr; }

  child_driver get_return_object() noexcept;
  std::suspend_always initial_suspend() noexcept { return {}; }

  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<child_promise> h) noexcept {
      child_promise& p = h.promise();
      return p.m_scope->m_on_child_done(p.m_scope, h);
    }
    void await_resume() const noexcept {}
  };
  final_awaiter final_suspend() noexcept { return {}; }
  void return_void() noexcept {}
  // The driver's body only transfers to the child; nothing in it can throw.
  void unhandled_exception() noexcept { std::terminate(); }
};

/// Owner of a driver coroutine (destroys it unless released). Move-only.
class [[nodiscard]] child_driver {
 public:
  using promise_type = child_promise;

  child_driver() noexcept = default;
  explicit child_driver(std::coroutine_handle<child_promise> h) noexcept : m_h(h) {}
  child_driver(child_driver&& o) noexcept : m_h(std::exchange(o.m_h, {})) {}
  child_driver& operator=(child_driver&& o) noexcept {
    if (this != &o) {
      if (m_h)
        m_h.destroy();
      m_h = std::exchange(o.m_h, {});
    }
    return *this;
  }
  child_driver(const child_driver&) = delete;
  child_driver& operator=(const child_driver&) = delete;
  ~child_driver() {
    if (m_h)
      m_h.destroy();
  }

  /// Ties the driver to its scope: it will run `child` under `ctx` and report to `scope`.
  template <class T>
  void bind(child_scope& scope, std::size_t index, const task_promise<T>& child, const task_context& ctx) noexcept {
    child_promise& p = m_h.promise();
    p.m_scope = &scope;
    p.m_index = index;
    p.m_child = &child;
    p.m_own_ctx = ctx;
    p.m_ctx = &p.m_own_ctx;
  }

  child_promise& promise() const noexcept { return m_h.promise(); }
  /// Gives up ownership (the driver then frees itself, see task_group).
  std::coroutine_handle<child_promise> release() noexcept { return std::exchange(m_h, {}); }

 private:
  std::coroutine_handle<child_promise> m_h{};
};

inline child_driver child_promise::get_return_object() noexcept {
  return child_driver(std::coroutine_handle<child_promise>::from_promise(*this));
}

/// Starts a child under the driver's context and resumes the driver when it ends, leaving
/// the child's value or exception in the child's promise.
template <class T>
struct start_child {
  std::coroutine_handle<task_promise<T>> m_child;
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<child_promise> driver) noexcept {
    task_promise<T>& c = m_child.promise();
    c.m_continuation = driver;
    c.m_ctx = driver.promise().m_ctx;
    return m_child;  // symmetric transfer: the child runs now, on this thread
  }
  void await_resume() const noexcept {}
};

/// A driver for a child the scope owns (when_all, when_any keep the task to read it).
template <class T>
child_driver drive_borrowed(std::coroutine_handle<task_promise<T>> child) {
  co_await start_child<T>{child};
}

/// A driver that owns its child: destroying the driver destroys the child (task_group).
template <class T>
child_driver drive_owned(task<T> child) {
  co_await start_child<T>{child.handle()};
}

/// What a child's result becomes in a tuple or variant: void → std::monostate,
/// T& → std::reference_wrapper<T>, anything else unchanged.
template <class T>
struct child_value {
  using type = T;
};
template <>
struct child_value<void> {
  using type = std::monostate;
};
template <class T>
struct child_value<T&> {
  using type = std::reference_wrapper<T>;
};
template <class T>
using child_value_t = typename child_value<T>::type;

/// Moves a finished child's value out (or rethrows its exception).
template <class T>
child_value_t<T> take_child_value(task<T>& t) {
  if constexpr (std::is_void_v<T>) {
    t.handle().promise().take();
    return std::monostate{};
  } else if constexpr (std::is_reference_v<T>) {
    return std::ref(t.handle().promise().take());
  } else {
    return t.handle().promise().take();
  }
}

}  // namespace saturn::detail
