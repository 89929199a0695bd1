/// \file
/// `task<T>`: saturn's coroutine type. Lazy (nothing runs until it is awaited or spawned),
/// move-only, and awaited by symmetric transfer, so a chain of a million nested co_awaits
/// uses constant stack. An exception thrown in a task is rethrown to its awaiter.
///
/// ```
/// saturn::task<int> answer() { co_return 42; }
/// saturn::task<> twice() { int a = co_await answer(); int b = co_await answer(); /* ... */ }
/// ```
#pragma once

#include <saturn/task/detail/promise_base.hpp>

#include <cassert>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace saturn {

template <class T = void>
class task;
template <class T>
class join_handle;

namespace detail {

/// Storage for what a task ends with: a value or an exception. For trivially destructible
/// values no "has value" flag is kept (a smaller frame: docs/decisions/task-frame-size.md).
/// How a result is stored: a value that needs destroying, a trivial value, a reference,
/// or nothing.
enum class result_kind { value, trivial, reference, none };
template <class T>
constexpr result_kind kind_of() {
  if constexpr (std::is_void_v<T>)
    return result_kind::none;
  else if constexpr (std::is_reference_v<T>)
    return result_kind::reference;
  else if constexpr (std::is_trivially_destructible_v<T>)
    return result_kind::trivial;
  else
    return result_kind::value;
}

template <class T, result_kind = kind_of<T>()>
struct task_result {
  union {
    T m_value;
  };
  std::exception_ptr m_exception;
  bool m_has_value = false;

  task_result() noexcept {}
  ~task_result() {
    if (m_has_value)
      m_value.~T();
  }
  template <class U>
  void return_value(U&& v) {
    ::new (static_cast<void*>(std::addressof(m_value))) T(std::forward<U>(v));
    m_has_value = true;
  }
  T take() {
    if (m_exception)
      std::rethrow_exception(m_exception);
    assert(m_has_value && "task result read twice or task not finished");
    return std::move(m_value);
  }
};

template <class T>
struct task_result<T, result_kind::trivial> {
  union {
    T m_value;
  };
  std::exception_ptr m_exception;

  task_result() noexcept {}
  template <class U>
  void return_value(U&& v) {
    ::new (static_cast<void*>(std::addressof(m_value))) T(std::forward<U>(v));
  }
  T take() {
    if (m_exception)
      std::rethrow_exception(m_exception);
    return std::move(m_value);
  }
};

template <class T>
struct task_result<T&, result_kind::reference> {
  T* m_value = nullptr;
  std::exception_ptr m_exception;
  void return_value(T& v) noexcept { m_value = std::addressof(v); }
  T& take() {
    if (m_exception)
      std::rethrow_exception(m_exception);
    return *m_value;
  }
};

template <>
struct task_result<void, result_kind::none> {
  std::exception_ptr m_exception;
  void return_void() noexcept {}
  void take() {
    if (m_exception)
      std::rethrow_exception(m_exception);
  }
};

template <class T>
struct task_promise;

/// Where a task_promise keeps its value. The exception always goes to the promise's
/// outcome space (promise_base::exception_slot, with join_failed saying it is there); a
/// small trivially destructible value goes there too. Only a larger or non-trivial value
/// gets storage of its own. The outcome space is the task_wait node's, free once the body
/// returned (docs/decisions/task-frame-size.md).
enum class result_home { own, outcome_space, none };
template <class T>
constexpr result_home home_of() {
  if constexpr (std::is_void_v<T>)
    return result_home::none;
  else if constexpr (std::is_reference_v<T>)
    // Apart from the next case so that sizeof(T) is never taken of a reference to an
    // incomplete type. NOLINTNEXTLINE(bugprone-branch-clone): same value, different case.
    return result_home::outcome_space;  // the referent's address
  else if constexpr (std::is_trivially_destructible_v<T> && sizeof(T) <= 16 && alignof(T) <= 8)
    return result_home::outcome_space;
  else
    return result_home::own;
}

/// What every promise_result does with an exception (the promise's outcome space).
struct promise_exception {
  /// Once per task: from unhandled_exception, or when a runtime abandons a task that has
  /// not ended (spawned_entry, after leave_wait()), never both.
  static void store_exception(promise_base& p, std::exception_ptr e) noexcept {
    ::new (static_cast<void*>(p.m_outcome_space)) std::exception_ptr(std::move(e));
    // ordering: relaxed; an RMW because a join_handle may set its bits concurrently.
    p.m_join.fetch_or(join_failed, std::memory_order_relaxed);
  }
  static void rethrow_if_failed(promise_base& p) {
    if (p.has_failed())
      std::rethrow_exception(*p.exception_slot());
  }
  static void destroy_exception(promise_base& p) noexcept {
    if (p.has_failed())
      p.exception_slot()->~exception_ptr();
  }
};

template <class T, result_home H = home_of<T>()>
struct promise_result;

/// A value with storage of its own.
template <class T>
struct promise_result<T, result_home::own> : promise_exception {
  union {
    T m_value;
  };
  bool m_has_value = false;
  promise_result() noexcept {}
  ~promise_result() {}  // destroy_result() does the work
  template <class U>
  void return_value(U&& v) {
    ::new (static_cast<void*>(std::addressof(m_value))) T(std::forward<U>(v));
    m_has_value = true;
  }
  T take_result(promise_base& p) {
    rethrow_if_failed(p);
    assert(m_has_value && "task result read twice or task not finished");
    return std::move(m_value);
  }
  void destroy_result(promise_base& p) noexcept {
    destroy_exception(p);
    if (m_has_value)
      m_value.~T();
  }
};

/// A small trivially destructible value, or a reference, in the outcome space.
template <class T>
struct promise_result<T, result_home::outcome_space> : promise_exception {
  using stored = std::conditional_t<std::is_reference_v<T>, std::remove_reference_t<T>*, T>;
  static_assert(sizeof(stored) <= sizeof(promise_base::m_outcome_space));
  template <class U>
  void return_value(U&& v) {
    promise_base& p = static_cast<task_promise<T>&>(*this);
    if constexpr (std::is_reference_v<T>)
      ::new (static_cast<void*>(p.m_outcome_space)) stored(std::addressof(v));
    else
      ::new (static_cast<void*>(p.m_outcome_space)) stored(std::forward<U>(v));
  }
  T take_result(promise_base& p) {
    rethrow_if_failed(p);
    stored* v = std::launder(reinterpret_cast<stored*>(p.m_outcome_space));
    if constexpr (std::is_reference_v<T>)
      return static_cast<T>(**v);
    else
      return std::move(*v);
  }
  void destroy_result(promise_base& p) noexcept { destroy_exception(p); }
};

/// No value (task<void>).
template <>
struct promise_result<void, result_home::none> : promise_exception {
  void return_void() noexcept {}
  void take_result(promise_base& p) { rethrow_if_failed(p); }
  void destroy_result(promise_base& p) noexcept { destroy_exception(p); }
};

/// Reports an exception nobody can receive any more (a detached task's).
void report_detached_exception(std::exception_ptr e) noexcept;

template <class T>
struct task_promise final : promise_base, promise_result<T> {
  task_promise() noexcept { m_fn = &resume_from_queue<task_promise>; }
  ~task_promise() { this->destroy_result(*this); }
  task_promise(const task_promise&) = delete;
  task_promise& operator=(const task_promise&) = delete;

  /// The task's value, or rethrows its exception. Once, after the task ended.
  decltype(auto) take() { return this->take_result(*this); }
  /// Stores `e` as the task's outcome (unhandled_exception, or a runtime abandoning it).
  // `e` is moved: the check misses a move inside a call that depends on T.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  void fail(std::exception_ptr e) noexcept { promise_exception::store_exception(*this, std::move(e)); }

  task<T> get_return_object() noexcept;
  std::suspend_always initial_suspend() noexcept { return {}; }

  struct final_awaiter {
    bool await_ready() noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<task_promise> h) noexcept {
      task_promise& p = h.promise();
      if ((p.m_join.load(std::memory_order_relaxed) & join_spawned) == 0) [[likely]]
        return p.m_continuation ? p.m_continuation : std::noop_coroutine();
      // A spawned task: hand the result to its join_handle (or free itself if detached).
      p.untrack();
      // ordering: acq_rel: release publishes the result to the joiner; acquire makes the
      // joiner's m_continuation (written before its own fetch_or) visible here.
      const std::uint32_t old = p.m_join.fetch_or(join_complete, std::memory_order_acq_rel);
      if (old & join_detached) {
        if (p.has_failed())
          report_detached_exception(*p.exception_slot());
        h.destroy();
        return std::noop_coroutine();
      }
      if (old & join_waiting) {
        if (old & join_foreign) [[unlikely]] {
          // The joiner's promise (join_handle's awaiter): queued on its own scheduler.
          static_cast<promise_base*>(p.m_continuation.address())->wake();
          return std::noop_coroutine();
        }
        return p.m_continuation;
      }
      return std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  final_awaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { fail(std::current_exception()); }
};

}  // namespace detail

/// A lazy coroutine producing a T (or void, or a reference).
///
/// Threading: a task runs on one thread at a time; with the work-stealing scheduler it may
/// continue on another worker after a suspension. Awaiting a task runs it inline (it
/// inherits the awaiter's scheduler and cancellation token). A task object that is
/// destroyed before it was awaited or spawned destroys its frame without running it.
template <class T>
class [[nodiscard]] task {
 public:
  using promise_type = detail::task_promise<T>;
  using value_type = T;

  task() noexcept = default;
  explicit task(std::coroutine_handle<promise_type> h) noexcept : m_h(h) {}
  task(task&& o) noexcept : m_h(std::exchange(o.m_h, {})) {}
  task& operator=(task&& o) noexcept {
    if (this != &o) {
      if (m_h)
        m_h.destroy();
      m_h = std::exchange(o.m_h, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() {
    if (m_h)
      m_h.destroy();
  }

  /// True when this object holds a coroutine.
  explicit operator bool() const noexcept { return static_cast<bool>(m_h); }

  struct awaiter {
    std::coroutine_handle<promise_type> m_h;
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> caller) noexcept {
      promise_type& p = m_h.promise();
      p.m_continuation = caller;
      if constexpr (detail::saturn_promise<P>)
        p.m_ctx = caller.promise().m_ctx;
      return m_h;  // symmetric transfer: start the child without growing the stack
    }
    T await_resume() { return m_h.promise().take(); }
  };
  /// Runs the task to completion and returns its value (or rethrows its exception).
  awaiter operator co_await() && noexcept {
    assert(m_h && "co_await on an empty task");
    return awaiter{m_h};
  }

  /// Gives up ownership of the coroutine (for schedulers and combinators).
  std::coroutine_handle<promise_type> release() noexcept { return std::exchange(m_h, {}); }
  std::coroutine_handle<promise_type> handle() const noexcept { return m_h; }

 private:
  std::coroutine_handle<promise_type> m_h{};
};

template <class T>
task<T> detail::task_promise<T>::get_return_object() noexcept {
  return task<T>(std::coroutine_handle<task_promise>::from_promise(*this));
}

namespace detail {
/// True for task<T>.
template <class T>
struct is_task : std::false_type {};
template <class T>
struct is_task<task<T>> : std::true_type {};
}  // namespace detail

}  // namespace saturn
