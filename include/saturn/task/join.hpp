/// \file
/// `join`: fork-join for divide and conquer. `saturn::join(a, b)` runs two callables,
/// possibly in parallel, and returns both results: `b` is offered to the other workers
/// of the thread_pool, `a` runs at once on the calling thread, and then `b` runs inline
/// too unless a thief took it first (rayon's `join`). An unstolen fork costs a push and a
/// pop on the worker's own deque: no allocation (the fork lives on the caller's stack),
/// no suspension, no queue round trip, no wake-up unless a worker is parked and none is
/// already searching (the rule spawn follows). A thief takes one fork at a time, the
/// oldest on the deque (the largest piece left of the recursion), never a batch, so the
/// joiner does not come back to forks that were taken but not yet started.
///
/// ```
/// std::uint64_t fib(unsigned n) {
///   if (n < 2) return n;
///   auto [x, y] = saturn::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
///   return x + y;
/// }
/// ```
///
/// The callables are plain functions, not coroutines: a branch must not co_await (it
/// may spawn tasks). While a stolen branch runs elsewhere, the joining worker runs other
/// work it finds (its own deque, the injection queue, other workers' deques) and, when
/// there is none for a while, sleeps on the fork until the thief is done. A join blocks
/// its thread until both branches have ended, so the worker's own I/O completions wait
/// meanwhile: use join for CPU work, and spawn / when_all for work that waits.
#pragma once

#include <saturn/detail/atomic.hpp>
#include <saturn/loop/runnable.hpp>

#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace saturn {

/// What a branch returning R contributes to join's result: R, a std::monostate for
/// void, a std::reference_wrapper<T> for T&.
template <class R>
using join_value_t = std::conditional_t<
    std::is_void_v<R>, std::monostate,
    std::conditional_t<std::is_reference_v<R>, std::reference_wrapper<std::remove_reference_t<R>>, R>>;

namespace detail {

/// A fork: the second branch of a join, offered to thieves from the joiner's stack frame.
///
/// Protocol (m_state): 0 pending; 1 done (the thief ran the branch and stored its outcome;
/// release); 2 the joiner sleeps on the word (futex). The thief's exchange to 1 is its
/// last access to the fork: the joiner may return (and the frame go) right after it.
struct fork_job : runnable {
  void (*m_body)(fork_job*) noexcept = nullptr;  ///< runs the branch, stores its outcome
  saturn::detail::atomic<std::uint32_t> m_state{0};
};

/// m_fn of every fork_job: runs the branch on the thread that took the fork (a thief, or
/// the joiner itself helping), then marks it done. src/sched/fork.cpp.
void run_fork_job(runnable* r, run_mode mode) noexcept;
/// Offers `job` to thieves: pushes it on the calling worker's deque (waking a parked
/// worker only when none is searching). False, doing nothing, when the calling thread is
/// not a worker of a thread_pool with more than one worker: nobody could steal it then,
/// and the caller runs the branch itself.
bool fork_offer(fork_job& job) noexcept;
/// After the first branch: true when `job` was still on the deque and is taken back (the
/// caller runs the branch inline); false when it was stolen and has now ended (the
/// caller reads its outcome). Runs other work while it waits. Same thread as fork_offer.
bool fork_reclaim(fork_job& job) noexcept;

/// Calls f and returns its result as a join_value_t.
template <class F>
join_value_t<std::invoke_result_t<F&>> invoke_as_value(F& f) {
  using R = std::invoke_result_t<F&>;
  if constexpr (std::is_void_v<R>) {
    std::invoke(f);
    return {};
  } else if constexpr (std::is_reference_v<R>) {
    return std::ref(std::invoke(f));
  } else {
    return std::invoke(f);
  }
}

/// The fork of a branch of type F: a pointer to it and room for its outcome.
template <class F>
struct typed_fork final : fork_job {
  using value = join_value_t<std::invoke_result_t<F&>>;
  F* m_fn_obj;
  std::exception_ptr m_error;
  bool m_has_value = false;
  union {
    value m_value;
  };

  explicit typed_fork(F& f) noexcept : m_fn_obj(std::addressof(f)) {
    m_fn = &run_fork_job;
    m_body = &body;
  }
  typed_fork(const typed_fork&) = delete;
  typed_fork& operator=(const typed_fork&) = delete;
  ~typed_fork() {
    if (m_has_value)
      m_value.~value();
  }

  static void body(fork_job* j) noexcept {
    auto* self = static_cast<typed_fork*>(j);
    try {
      ::new (static_cast<void*>(std::addressof(self->m_value))) value(invoke_as_value(*self->m_fn_obj));
      self->m_has_value = true;
    } catch (...) {
      self->m_error = std::current_exception();
    }
  }
  /// The stolen branch's value, or its exception rethrown.
  value take() {
    if (m_error)
      std::rethrow_exception(m_error);
    return std::move(m_value);
  }
};

/// join of two branches, as a pair of join_value_t (void branches give monostate).
template <class A, class B>
std::pair<join_value_t<std::invoke_result_t<A&>>, join_value_t<std::invoke_result_t<B&>>> join_pair(A& a, B& b) {
  using VA = join_value_t<std::invoke_result_t<A&>>;
  typed_fork<B> job(b);
  const bool offered = fork_offer(job);
  // lifetime: the fork lives in this frame, and whoever took it may still run it: every
  // path out of here, an exception from `a` included, first takes it back or waits for it.
  std::exception_ptr a_error;
  alignas(VA) unsigned char ra_buf[sizeof(VA)];
  VA* ra = nullptr;
  try {
    ra = ::new (static_cast<void*>(ra_buf)) VA(invoke_as_value(a));
  } catch (...) {
    a_error = std::current_exception();
  }
  struct destroy_ra {
    VA* p;
    ~destroy_ra() {
      if (p != nullptr)
        p->~VA();
    }
  } guard{ra};
  if (!offered || fork_reclaim(job)) {
    if (a_error) {
      // Both branches always run to their end; the first branch's exception wins.
      try {
        (void)invoke_as_value(b);
      } catch (...) {
      }
      std::rethrow_exception(a_error);
    }
    return {std::move(*ra), invoke_as_value(b)};
  }
  if (a_error)
    std::rethrow_exception(a_error);
  return {std::move(*ra), job.take()};
}

template <class F, class... Fs>
auto join_tuple(F& f, Fs&... fs) {
  if constexpr (sizeof...(Fs) == 0) {
    return std::tuple<join_value_t<std::invoke_result_t<F&>>>(invoke_as_value(f));
  } else {
    auto rest = [&] { return join_tuple(fs...); };
    auto [head, tail] = join_pair(f, rest);
    return std::tuple_cat(std::tuple<decltype(head)>(std::move(head)), std::move(tail));
  }
}

template <class It, class Out>
void join_range(It first, std::size_t n, Out out) {
  if (n == 1) {
    if constexpr (std::is_same_v<Out, std::nullptr_t>)
      (void)invoke_as_value(*first);
    else
      *out = invoke_as_value(*first);
    return;
  }
  const std::size_t half = n / 2;
  auto left = [&] { join_range(first, half, out); };
  auto right = [&] {
    if constexpr (std::is_same_v<Out, std::nullptr_t>)
      join_range(std::next(first, static_cast<std::ptrdiff_t>(half)), n - half, nullptr);
    else
      join_range(std::next(first, static_cast<std::ptrdiff_t>(half)), n - half,
                 std::next(out, static_cast<std::ptrdiff_t>(half)));
  };
  join_pair(left, right);
}

}  // namespace detail

/// Runs `a()` and `b()`, in parallel when another worker is free to take `b`, and returns
/// both results: void when both return void, else a std::pair of join_value_t.
///
/// Threading: any thread. On a worker of a thread_pool with two or more workers `b` is
/// offered to the other workers and `a` runs at once on the calling thread; `b` runs on
/// the thief or, when nobody took it, inline after `a`. Elsewhere (a single-worker pool,
/// a runtime, a plain thread) both run in turn on the calling thread. Blocks the calling
/// thread until both have ended, running other queued work of the pool meanwhile; does
/// not suspend a task (the caller's coroutine stays on its worker). The callables are
/// taken by reference and must not co_await. Exceptions: both branches always run to
/// their end; then `a`'s exception is rethrown if it threw, else `b`'s.
template <class A, class B>
  requires std::invocable<A&> && std::invocable<B&>
auto join(A&& a, B&& b) {
  if constexpr (std::is_void_v<std::invoke_result_t<A&>> && std::is_void_v<std::invoke_result_t<B&>>)
    (void)detail::join_pair(a, b);
  else
    return detail::join_pair(a, b);
}

/// join of three or more callables: a std::tuple of their join_value_t, in argument order.
/// The first runs on the calling thread, the rest are offered to thieves (one fork each).
/// Same threading and exception contract as join(a, b); the first exception by argument
/// position is rethrown.
template <class F0, class F1, class F2, class... Fs>
  requires std::invocable<F0&> && std::invocable<F1&> && std::invocable<F2&> && (std::invocable<Fs&> && ...)
auto join(F0&& f0, F1&& f1, F2&& f2, Fs&&... fs) {
  return detail::join_tuple(f0, f1, f2, fs...);
}

/// join over a range of callables (a std::vector of lambdas, say), split in halves
/// recursively, so n branches cost n - 1 forks. Returns nothing when they return void,
/// else a std::vector of their results in range order (R must be default-constructible).
/// An empty range returns at once. Same threading and exception contract as join(a, b);
/// the exception of the leftmost failed half is rethrown.
template <class Range>
auto join_all(Range&& fns) {
  using F = std::remove_reference_t<decltype(*std::begin(fns))>;
  using R = std::invoke_result_t<F&>;
  const auto n = static_cast<std::size_t>(std::distance(std::begin(fns), std::end(fns)));
  if constexpr (std::is_void_v<R>) {
    if (n != 0)
      detail::join_range(std::begin(fns), n, nullptr);
  } else {
    std::vector<join_value_t<R>> out(n);
    if (n != 0)
      detail::join_range(std::begin(fns), n, out.begin());
    return out;
  }
}

/// Calls `fn(i)` for every i in [first, last), splitting the range in halves with join
/// down to pieces of at most `grain` indices, each run by one call in a loop. Same
/// threading and exception contract as join(a, b).
template <class F>
void join_for(std::size_t first, std::size_t last, std::size_t grain, F&& fn) {
  if (grain == 0)
    grain = 1;
  if (last <= first)
    return;
  if (last - first <= grain) {
    for (std::size_t i = first; i < last; ++i)
      fn(i);
    return;
  }
  const std::size_t mid = first + (last - first) / 2;
  join([&] { join_for(first, mid, grain, fn); }, [&] { join_for(mid, last, grain, fn); });
}

}  // namespace saturn
