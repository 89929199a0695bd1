/// \file
/// Time for tasks: sleep_for, sleep_until, with_timeout. Timers live in the loop's timer
/// heap (one kernel wait covers the nearest), so a sleep allocates nothing and costs no
/// kernel timer of its own. A sleep never ends before its deadline.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/result.hpp>
#include <saturn/task/await_under.hpp>
#include <saturn/task/detail/cancellable.hpp>
#include <saturn/task/task.hpp>
#include <saturn/task/this_task.hpp>

#include <atomic>
#include <concepts>
#include <functional>
#include <optional>
#include <type_traits>

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

/// with_timeout's error when the task did not finish before a stop: timed_out when the
/// deadline fired, operation_canceled when only the caller's own stop token did.
inline error timeout_error(bool deadline_fired) noexcept {
  return error{std::make_error_code(deadline_fired ? std::errc::timed_out : std::errc::operation_canceled),
               "with_timeout"};
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
  saturn::detail::atomic<bool> fired{false};
  saturn::detail::atomic<int> refs{2};
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

/// A compact stand-in for result<void> (sync's wait_result): tells success from an error
/// and converts to result<void>.
template <class T>
concept void_result_like = !is_result<T>::value && std::convertible_to<const T&, result<void>> &&
                           requires(const T& t) {
                             { t.has_value() } -> std::same_as<bool>;
                             { t.err() } -> std::same_as<const error&>;
                           };

/// What `with_timeout(d, task<T>)` gives: `result<T>`; `result<U>` itself when
/// T = `result<U>`; `result<void>` when T is void_result_like.
template <class T>
struct timeout_result {
  using type = std::conditional_t<void_result_like<T>, result<void>, result<T>>;
};
template <class U>
struct timeout_result<result<U>> {
  using type = result<U>;
};
template <class T>
using timeout_result_t = typename timeout_result<T>::type;

/// The awaiter `co_await a` would use for an rvalue `a`, and what it gives.
template <class A>
decltype(auto) awaiter_of(A&& a) {
  if constexpr (requires { static_cast<A&&>(a).operator co_await(); })
    return static_cast<A&&>(a).operator co_await();
  else if constexpr (requires { operator co_await(static_cast<A&&>(a)); })
    return operator co_await(static_cast<A&&>(a));
  else
    return static_cast<A&&>(a);
}
template <class A>
using await_result_t = std::remove_cvref_t<decltype(std::declval<std::remove_cvref_t<decltype(awaiter_of(
                                                        std::declval<A>()))>&>()
                                                        .await_resume())>;

template <class A>
concept plain_awaitable = requires(A&& a) {
  { awaiter_of(static_cast<A&&>(a)).await_ready() } -> std::convertible_to<bool>;
};

/// A task that awaits `a` and returns what it gives. A is an object type (then `a` is
/// owned by the frame) or an lvalue reference type (then it is the caller's object).
template <class R, class A>
task<R> await_as_task(A a) {
  // An lvalue operand: g++ 12 copies an xvalue awaiter, and saturn's awaiters are pinned.
  if constexpr (std::is_void_v<R> && std::is_reference_v<A>) {
    co_await a;
  } else if constexpr (std::is_void_v<R>) {
    co_await std::move(a);
  } else if constexpr (std::is_reference_v<A>) {
    co_return co_await a;
  } else {
    co_return co_await std::move(a);
  }
}

}  // namespace detail

/// Runs `t` with a deadline `d` from now. When the deadline fires first, `t` is cancelled
/// through its stop token (its in-flight I/O is cancelled in the kernel) and awaited until
/// it has really ended. A stop requested on the caller's own token is passed on to `t` in
/// the same way. The outcome, for `t` of type `task<T>`, is a `result<T>` — or, when T is
/// itself `result<U>`, a `result<U>` (not a `result<result<U>>`), and when T is a compact
/// success-or-error type convertible to result<void> (sync's wait_result), a result<void>:
///  - `t` ended and no stop had been requested (neither the deadline nor the caller's token)
///    when with_timeout saw it end: its outcome. For T = `result<U>` (or wait_result) that is
///    its outcome as is, value or error.
///  - otherwise, for T = `result<U>` holding a value (or a successful wait_result): that
///    value. `t` finished what it was doing, so nothing it computed (bytes already taken
///    from a socket, a message received just before the stop) is lost.
///  - otherwise (T not a result, T void, or a `result<U>` holding an error): an error whose
///    operation is "with_timeout": std::errc::timed_out when the deadline fired,
///    std::errc::operation_canceled when only the caller's token stopped. So a plain T
///    never reports success unless `t` ended before any stop, even if it returned a value
///    after one; an error `t` returned after a stop is replaced. A stop that races `t`'s
///    last step counts as before it (the outcome errs towards timed_out).
/// Exceptions of `t` propagate, whatever fired. Only what observes the task's stop token
/// (saturn I/O, sleeps, sync waits, nested with_timeout) is cut short by the deadline;
/// other work runs to its end first. Threading: await from a saturn task; it may end on
/// another worker than it began.
template <class T>
task<detail::timeout_result_t<T>> with_timeout(std::chrono::nanoseconds d, task<T> t) {
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

  // A named awaiter: g++ 12 destroys an aggregate temporary in a co_await operand twice.
  detail::in_context_awaiter<T> child{t.handle(), &ctx};
  if constexpr (std::is_void_v<T>) {
    co_await child;
    // ordering: the deadline sets `fired` before it requests the stop, so a stop seen
    // here that came from the deadline also shows `fired`.
    const bool stopped = source.stop_requested();
    const bool fired = deadline->fired.load(std::memory_order_acquire);
    if (stopped || fired)
      co_return detail::timeout_error(fired);
    co_return result<void>{};
  } else {
    T value = co_await child;
    const bool stopped = source.stop_requested();  // ordering: as above
    const bool fired = deadline->fired.load(std::memory_order_acquire);
    if constexpr (detail::is_result<T>::value) {
      if ((stopped || fired) && !value.has_value())
        co_return detail::timeout_error(fired);
      co_return std::move(value);
    } else if constexpr (detail::void_result_like<T>) {
      if ((stopped || fired) && !value.has_value())
        co_return detail::timeout_error(fired);
      co_return result<void>(value);
    } else {
      if (stopped || fired)
        co_return detail::timeout_error(fired);
      co_return result<T>(std::move(value));
    }
  }
}

/// with_timeout over any awaitable `a` (an I/O awaiter, a sleep, a sync wait, a join
/// handle, an effect): `co_await with_timeout(1s, sock.recv(buf))`. The returned task
/// awaits `a` under the rules above, with T the type `co_await a` gives (without
/// reference or const). A movable `a` passed as an rvalue (a join handle, an effect) is
/// moved into the task. saturn's I/O, sleep and sync awaiters are pinned (not movable):
/// the task then awaits `a` where the caller holds it, so await the task within the
/// full-expression that made a temporary `a` (as above), or keep a named `a` alive until
/// the task is done. What `a` refers to (a socket, a buffer) must outlive the task.
/// Threading: as above.
template <class A>
  requires(!detail::is_task<std::remove_cvref_t<A>>::value && detail::plain_awaitable<A>)
auto with_timeout(std::chrono::nanoseconds d, A&& a) {
  using value_type = detail::await_result_t<A>;
  using object = std::remove_cvref_t<A>;
  constexpr bool owned = !std::is_lvalue_reference_v<A> && std::move_constructible<object>;
  using held = std::conditional_t<owned, object, std::remove_reference_t<A>&>;
  if constexpr (owned)
    return with_timeout(d, detail::await_as_task<value_type, held>(std::forward<A>(a)));
  else
    return with_timeout(d, detail::await_as_task<value_type, held>(a));
}

}  // namespace saturn
