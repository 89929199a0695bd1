/// \file
/// Running an effect — the three places its operation state can live:
///   - `evaluate(e)`: a pure pipeline, on the caller's stack, completed before it returns;
///   - `start(e, loop, fn)`: tier A — one allocation from the loop's operation pool, fn
///     called on the loop thread with the outcome, the state freed after it;
///   - `co_await e` inside a `task<T>` (tier B): in the coroutine frame; the task's stop
///     token is the effect's, so stopping the task cancels the in-flight operation.
/// `block_on(rt, e)` runs an effect on a runtime or thread_pool via a task.
#pragma once

#include <saturn/effect/core.hpp>
#include <saturn/ext/op_pool.hpp>
#include <saturn/task/detail/promise_base.hpp>
#include <saturn/task/task.hpp>

#include <saturn/detail/atomic.hpp>
#include <cassert>
#include <optional>

namespace saturn::effect {
namespace detail {

template <class V>
struct outcome_slot {
  std::optional<outcome<V>> m_out;
};

/// Stores what the effect ends with into an optional outcome.
template <class V>
struct store_receiver {
  std::optional<outcome<V>>* m_out;
  env m_env;
  template <class... A>
  void set_value(A&&... a) noexcept {
    if constexpr (std::is_void_v<V>)
      m_out->emplace();
    else
      m_out->emplace(V(std::forward<A>(a)...));
  }
  void set_error(failure f) noexcept { m_out->emplace(std::move(f)); }
  env get_env() const noexcept { return m_env; }
};

}  // namespace detail

/// Runs a pure pipeline (one that completes inside start(), needing no loop) and returns
/// its outcome. The operation state lives on this function's stack; with everything
/// inlined, `evaluate(just(x) | then(f) | then(g))` is the code of `g(f(x))`.
/// Threading: any thread; never suspends.
template <an_effect E>
outcome<value_of<E>> evaluate(E&& e) {
  static_assert(completes_inline<E>,
                "evaluate(e): e contains an operation that needs a loop (nop, read, timers, retry …); "
                "use co_await, start(e, loop, fn) or block_on instead");
  using V = value_of<E>;
  std::optional<outcome<V>> out;
  auto op = connect(std::forward<E>(e), detail::store_receiver<V>{&out, env{}});
  op.start();
  return std::move(*out);
}

// ---------------------------------------------------------------- tier A: callbacks

namespace detail {
template <class E, class F>
class callback_start {
  using V = value_of<E>;
  struct receiver {
    callback_start* m_self;
    // The outcome is built right in fn's argument (one object, no move).
    template <class... A>
    void set_value(A&&... a) noexcept {
      callback_start* self = m_self;
      if constexpr (std::is_void_v<V>)
        self->m_fn(outcome<void>());
      else
        self->m_fn(outcome<V>(V(std::forward<A>(a)...)));
      self->destroy();
    }
    void set_error(failure f) noexcept {
      callback_start* self = m_self;
      self->m_fn(outcome<V>(std::move(f)));
      self->destroy();
    }
    env get_env() const noexcept {
      // sched stays null: from_task falls back to the calling thread's scheduler.
      return env{m_self->m_loop, nullptr, m_self->m_token.stop_possible() ? &m_self->m_token : nullptr};
    }
  };

 public:
  template <class G>
  callback_start(E&& e, event_loop* loop, G&& fn, std::stop_token tok)
      : m_loop(loop), m_fn(std::forward<G>(fn)), m_token(std::move(tok)),
        m_op(std::move(e).connect(receiver{this})) {}

  static callback_start* make(E&& e, event_loop& loop, F fn, std::stop_token tok) {
    void* mem = ext::pool(loop).allocate(sizeof(callback_start), alignof(callback_start));
    return ::new (mem) callback_start(std::move(e), &loop, std::move(fn), std::move(tok));
  }
  void start() noexcept { m_op.start(); }

 private:
  void destroy() noexcept {
    event_loop* loop = m_loop;
    // lifetime: the operation state called us as its last action; we are its owner.
    this->~callback_start();
    ext::pool(*loop).deallocate(this, sizeof(callback_start), alignof(callback_start));
  }

  event_loop* m_loop;
  F m_fn;
  std::stop_token m_token;
  connect_result_t<E, receiver> m_op;
};
}  // namespace detail

/// Tier A: starts `e` on `loop` and calls `fn(outcome<V>)` on the loop thread when it
/// ends (inline, before start returns, for a pure pipeline). The operation state takes one
/// allocation from the loop's operation pool, freed right after fn. A stop requested on
/// `tok` cancels the in-flight operation (fn then sees operation_canceled).
/// Threading: the loop's thread only. fn must not throw.
template <an_effect E, class F>
void start(E&& e, event_loop& loop, F&& fn, std::stop_token tok = {}) {
  static_assert(std::is_invocable_v<std::decay_t<F>&, outcome<value_of<E>>&&>,
                "start(e, loop, fn): fn must be callable as fn(saturn::effect::outcome<V>) where V is the "
                "effect's value type");
  using op_t = detail::callback_start<std::remove_cvref_t<E>, std::decay_t<F>>;
  std::remove_cvref_t<E> moved(std::forward<E>(e));
  op_t::make(std::move(moved), loop, std::forward<F>(fn), std::move(tok))->start();
}

// ---------------------------------------------------------------- tier B: co_await

namespace detail {
/// Awaits an effect from a saturn task; the operation state is a member (in the frame).
template <class E>
class effect_awaiter {
  using V = value_of<E>;
  struct receiver {
    effect_awaiter* m_a;
    template <class... A>
    void set_value(A&&... a) noexcept {
      if constexpr (std::is_void_v<V>)
        m_a->m_out.emplace();
      else
        m_a->m_out.emplace(V(std::forward<A>(a)...));
      m_a->done();
    }
    void set_error(failure f) noexcept {
      m_a->m_out.emplace(std::move(f));
      m_a->done();
    }
    env get_env() const noexcept { return m_a->m_env; }
  };

 public:
  explicit effect_awaiter(E&& e) : m_op(std::move(e).connect(receiver{this})) {}
  effect_awaiter(const effect_awaiter&) = delete;
  effect_awaiter& operator=(const effect_awaiter&) = delete;

  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    static_assert(saturn::detail::saturn_promise<P>, "co_await of an effect must be inside a saturn::task");
    m_promise = &h.promise();
    m_env = env{event_loop::current(), m_promise->sched(), &m_promise->token()};
    m_op.start();
    // ordering: acq_rel pairs with done(): whichever comes second decides who resumes.
    return m_state.exchange(k_suspended, std::memory_order_acq_rel) != k_done;
  }
  /// The value, or the failure as an error; a failure that is an exception is rethrown.
  result<V> await_resume() {
    outcome<V>& o = *m_out;
    if (!o.has_value()) {
      if (o.error().is_exception())
        std::rethrow_exception(o.error().exception());
      return o.error().err();
    }
    if constexpr (std::is_void_v<V>)
      return {};
    else
      return result<V>(std::move(*o));
  }

 private:
  enum : unsigned char { k_running, k_suspended, k_done };
  void done() noexcept {
    if (m_state.exchange(k_done, std::memory_order_acq_rel) == k_suspended)
      m_promise->wake();
  }

  connect_result_t<E, receiver> m_op;
  std::optional<outcome<V>> m_out;
  saturn::detail::promise_base* m_promise = nullptr;
  env m_env;
  saturn::detail::atomic<unsigned char> m_state{k_running};
};
}  // namespace detail

/// `co_await e` in a saturn task: result<V> (the value or the error); an exception from
/// the pipeline is rethrown into the task. Suspends unless e completes inline. Stopping
/// the task (with_timeout, when_any, task groups) cancels e's in-flight operations.
/// Bind non-trivial effects to a local first (`auto e = …; co_await std::move(e);`):
/// g++ 12 may destroy aggregate temporaries in a co_await operand twice.
template <an_effect E>
detail::effect_awaiter<std::remove_cvref_t<E>> operator co_await(E&& e) {
  return detail::effect_awaiter<std::remove_cvref_t<E>>(std::remove_cvref_t<E>(std::forward<E>(e)));
}

/// A task that awaits `e` (for runtime::block_on, thread_pool::block_on, spawn).
template <an_effect E>
task<outcome<value_of<E>>> as_task(E e) {
  using V = value_of<E>;
  try {
    if constexpr (std::is_void_v<V>) {
      result<void> r = co_await std::move(e);
      if (!r)
        co_return outcome<void>(failure(r.err()));
      co_return outcome<void>();
    } else {
      result<V> r = co_await std::move(e);
      if (!r)
        co_return outcome<V>(failure(r.err()));
      co_return outcome<V>(std::move(*r));
    }
  } catch (...) {
    co_return outcome<V>(failure(std::current_exception()));
  }
}

/// Runs `e` to completion on `rt` (a runtime or a thread_pool) from outside it and
/// returns its outcome. Threading: as Runtime::block_on (not from inside the runtime).
template <class Runtime, an_effect E>
outcome<value_of<E>> block_on(Runtime& rt, E&& e) {
  return rt.block_on(as_task(std::remove_cvref_t<E>(std::forward<E>(e))));
}

}  // namespace saturn::effect
