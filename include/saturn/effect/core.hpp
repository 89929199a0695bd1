/// \file
/// Tier C's protocol (the shape of P2300 `std::execution`, reduced to what saturn needs).
///
/// An *effect* is a lazy description of work: a value type, and `connect(receiver)`,
/// which returns an *operation state* — an immovable object holding everything the work
/// needs (the composed receivers, the io_uring `operation`, timers, child states). Nothing
/// runs until `start()` is called on it; the state must stay where it is until the
/// receiver was called. Where it lives is the caller's choice: a coroutine frame
/// (`co_await`), a local (`evaluate`), or one pool allocation (`start(effect, loop, fn)`).
///
/// A *receiver* gets exactly one of `set_value(v)` (no argument for void) or
/// `set_error(failure)`, and answers `get_env()`: the loop, the scheduler and the stop
/// token the work runs under. Calling the receiver is always the last thing an operation
/// state does, so the receiver may destroy the state it was called from.
///
/// Composition is a type-level fold: `just(1) | then(f) | then(g)` is a
/// `then_effect<then_effect<just_effect<int>, F>, G>`; connecting it wraps the receiver
/// in `then_receiver<G, then_receiver<F, R>>` and hands it to `just`, whose state calls
/// it — all inline, no virtual call, no allocation.
#pragma once

#include <saturn/effect/outcome.hpp>
#include <saturn/loop/event_loop.hpp>
#include <saturn/task/scheduler.hpp>

#include <concepts>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace saturn::effect {

/// What a receiver tells the work it receives from: where it runs and what can stop it.
/// All three may be null (a pure pipeline needs none of them). `token` null means "can
/// never be stopped": leaves then register no stop callback at all.
struct env {
  event_loop* loop = nullptr;
  scheduler* sched = nullptr;
  const std::stop_token* token = nullptr;

  /// True when a stop may still be requested (only then is cancellation armed).
  bool stoppable() const noexcept { return token != nullptr && token->stop_possible(); }
  bool stop_requested() const noexcept { return token != nullptr && token->stop_requested(); }
};

/// Base of every effect type D (CRTP, so that an effect nested in another never shares
/// an empty base subobject with it: a pipeline of empty functions stays as small as its
/// values). It also brings this namespace's operator| and operator co_await into reach of
/// argument-dependent lookup.
template <class D>
struct effect_base {
  static constexpr bool is_saturn_effect = true;
};
/// Base of every partially applied operator (`then(f)` …).
struct closure_base {};

namespace detail {
using closure_tag = closure_base;

/// The argument list a value of type V is delivered with: () for void, (V) otherwise.
template <class F, class V>
struct value_invoke {
  static constexpr bool ok = std::is_invocable_v<F, V>;
  static constexpr bool nothrow = std::is_nothrow_invocable_v<F, V>;
  using type = typename std::conditional_t<ok, std::invoke_result<F, V>, std::type_identity<void>>::type;
};
template <class F>
struct value_invoke<F, void> {
  static constexpr bool ok = std::is_invocable_v<F>;
  static constexpr bool nothrow = std::is_nothrow_invocable_v<F>;
  using type = typename std::conditional_t<ok, std::invoke_result<F>, std::type_identity<void>>::type;
};
}  // namespace detail

/// Every effect type derives from effect_base<itself> and names its value type.
template <class E>
concept an_effect = requires { requires std::remove_cvref_t<E>::is_saturn_effect; };

/// The value an effect produces (void for none).
template <an_effect E>
using value_of = typename std::remove_cvref_t<E>::value_type;

/// The operation state of connecting E to R.
template <class E, class R>
using connect_result_t = decltype(std::declval<std::remove_cvref_t<E>&&>().connect(std::declval<R>()));

/// True when E completes inside start() and needs no loop (a pure pipeline).
template <an_effect E>
inline constexpr bool completes_inline = std::remove_cvref_t<E>::completes_inline;

/// Connects `e` to `r` (consumes e). The result is an immovable operation state.
template <an_effect E, class R>
auto connect(E&& e, R r) {
  // Consumes `e` whether it is an lvalue or not (connect() is &&-qualified).
  // NOLINTNEXTLINE(bugprone-move-forwarding-reference)
  return std::move(e).connect(std::move(r));
}

// ---------------------------------------------------------------- pipe syntax

/// A partially applied operator (`then(f)`): `effect | closure` applies it.
template <class Fn>
struct closure : detail::closure_tag {
  Fn m_fn;
  explicit closure(Fn fn) : m_fn(std::move(fn)) {}
  template <an_effect E>
  auto operator()(E&& e) && {
    return std::move(m_fn)(std::forward<E>(e));
  }
};
template <class Fn>
auto make_closure(Fn fn) {
  return closure<Fn>(std::move(fn));
}

/// `e | op(args)` == `op(e, args)`.
template <an_effect E, class C>
  requires std::is_base_of_v<detail::closure_tag, std::remove_cvref_t<C>>
auto operator|(E&& e, C&& c) {
  return std::remove_cvref_t<C>(std::forward<C>(c))(std::forward<E>(e));
}

// ---------------------------------------------------------------- just / just_error

/// Completes with `v` as soon as it is started.
template <class T>
struct just_effect : effect_base<just_effect<T>> {
  using value_type = T;
  static constexpr bool completes_inline = true;
  T m_value;
  explicit just_effect(T v) : m_value(std::move(v)) {}

  template <class R>
  struct op {
    T m_value;
    R m_r;
    void start() noexcept { m_r.set_value(std::move(m_value)); }
  };
  template <class R>
  op<R> connect(R r) && {
    return op<R>{std::move(m_value), std::move(r)};
  }
};

template <>
struct just_effect<void> : effect_base<just_effect<void>> {
  using value_type = void;
  static constexpr bool completes_inline = true;
  just_effect() = default;
  template <class R>
  struct op {
    R m_r;
    void start() noexcept { m_r.set_value(); }
  };
  template <class R>
  op<R> connect(R r) && {
    return op<R>{std::move(r)};
  }
};

/// An effect that completes at once with `v` (P2300 `just`). Threading: any.
template <class T>
just_effect<std::decay_t<T>> just(T&& v) {
  return just_effect<std::decay_t<T>>(std::forward<T>(v));
}
/// An effect that completes at once with no value.
inline just_effect<void> just() { return {}; }

/// Completes with `f` (an error) as soon as it is started; its value type is T.
template <class T>
struct just_error_effect : effect_base<just_error_effect<T>> {
  using value_type = T;
  static constexpr bool completes_inline = true;
  failure m_failure;
  explicit just_error_effect(failure f) : m_failure(std::move(f)) {}
  template <class R>
  struct op {
    failure m_failure;
    R m_r;
    void start() noexcept { m_r.set_error(std::move(m_failure)); }
  };
  template <class R>
  op<R> connect(R r) && {
    return op<R>{std::move(m_failure), std::move(r)};
  }
};

/// An effect of value type T that fails at once with `f` (P2300 `just_error`).
template <class T = void>
just_error_effect<T> just_error(failure f) {
  return just_error_effect<T>(std::move(f));
}

/// Completes with the value or the error held in a saturn::result (value type T).
template <class T>
struct just_result_effect : effect_base<just_result_effect<T>> {
  using value_type = T;
  static constexpr bool completes_inline = true;
  result<T> m_result;
  explicit just_result_effect(result<T> r) : m_result(std::move(r)) {}
  template <class R>
  struct op {
    result<T> m_result;
    R m_r;
    void start() noexcept {
      if (!m_result.has_value())
        m_r.set_error(m_result.err());
      else if constexpr (std::is_void_v<T>)
        m_r.set_value();
      else
        m_r.set_value(std::move(*m_result));
    }
  };
  template <class R>
  op<R> connect(R r) && {
    return op<R>{std::move(m_result), std::move(r)};
  }
};

/// An effect from a tier-B style result<T>: its value, or its error as a failure.
template <class T>
just_result_effect<T> just_result(result<T> r) {
  return just_result_effect<T>(std::move(r));
}

// ---------------------------------------------------------------- then

namespace detail {
/// Calls f with the value and passes what it returns on; an exception becomes a failure.
template <class F, class R>
struct then_receiver {
  [[no_unique_address]] F m_f;
  R m_r;
  template <class... A>
  void set_value(A&&... a) noexcept {
    using U = std::invoke_result_t<F&, A...>;
    if constexpr (std::is_nothrow_invocable_v<F&, A...>) {
      if constexpr (std::is_void_v<U>) {
        m_f(std::forward<A>(a)...);
        m_r.set_value();
      } else {
        m_r.set_value(m_f(std::forward<A>(a)...));
      }
    } else {
      try {
        if constexpr (std::is_void_v<U>) {
          m_f(std::forward<A>(a)...);
          m_r.set_value();
        } else {
          m_r.set_value(m_f(std::forward<A>(a)...));  // set_value is noexcept: only f throws
        }
      } catch (...) {
        m_r.set_error(failure(std::current_exception()));
      }
    }
  }
  void set_error(failure f) noexcept { m_r.set_error(std::move(f)); }
  env get_env() const noexcept { return m_r.get_env(); }
};
}  // namespace detail

/// `e | then(f)`: maps e's value through f (P2300 `then`). Errors pass through untouched.
template <class E, class F>
struct then_effect : effect_base<then_effect<E, F>> {
  using in_type = value_of<E>;
  static_assert(detail::value_invoke<F&, in_type>::ok,
                "then(f): f cannot be called with the value of the effect before it — f must take "
                "that value type (or no argument when it is void)");
  using value_type = typename detail::value_invoke<F&, in_type>::type;
  static_assert(!std::is_reference_v<value_type>, "then(f): f must return a value, not a reference");
  static constexpr bool completes_inline = E::completes_inline;

  E m_e;
  [[no_unique_address]] F m_f;
  then_effect(E e, F f) : m_e(std::move(e)), m_f(std::move(f)) {}

  template <class R>
  auto connect(R r) && {
    return std::move(m_e).connect(detail::then_receiver<F, R>{std::move(m_f), std::move(r)});
  }
};

/// Maps the value of `e` through `f`. Threading: f runs where e completes.
template <an_effect E, class F>
auto then(E&& e, F&& f) {
  return then_effect<std::remove_cvref_t<E>, std::decay_t<F>>(std::forward<E>(e), std::forward<F>(f));
}
/// `then(f)` for pipes: `e | then(f)`.
template <class F>
  requires(!an_effect<F>)
auto then(F&& f) {
  return make_closure([f = std::forward<F>(f)]<class E>(E&& e) mutable { return then(std::forward<E>(e), std::move(f)); });
}

// ---------------------------------------------------------------- upon_error

namespace detail {
/// Turns a failure into a value with f (a recovery); values pass through.
template <class F, class R>
struct upon_error_receiver {
  [[no_unique_address]] F m_f;
  R m_r;
  template <class... A>
  void set_value(A&&... a) noexcept {
    m_r.set_value(std::forward<A>(a)...);
  }
  // By value, as every receiver's: completing m_r may destroy the operation that owned
  // the caller's failure. NOLINTNEXTLINE(performance-unnecessary-value-param)
  void set_error(failure f) noexcept {
    using U = std::invoke_result_t<F&, const failure&>;
    try {
      if constexpr (std::is_void_v<U>) {
        m_f(static_cast<const failure&>(f));
        m_r.set_value();
      } else {
        m_r.set_value(m_f(static_cast<const failure&>(f)));
      }
    } catch (...) {
      m_r.set_error(failure(std::current_exception()));
    }
  }
  env get_env() const noexcept { return m_r.get_env(); }
};
}  // namespace detail

/// `e | upon_error(f)`: f(const failure&) turns an error into a value of e's value type
/// (P2300 `upon_error`). Cancellation is an error too (failure::is_canceled()).
template <class E, class F>
struct upon_error_effect : effect_base<upon_error_effect<E, F>> {
  using value_type = value_of<E>;
  static_assert(std::is_invocable_v<F&, const failure&>,
                "upon_error(f): f must be callable as f(const saturn::effect::failure&)");
  static_assert(std::is_void_v<value_type>
                    ? std::is_void_v<std::invoke_result_t<F&, const failure&>>
                    : std::is_convertible_v<std::invoke_result_t<F&, const failure&>, value_type>,
                "upon_error(f): f must return the value type of the effect before it (void for void)");
  static constexpr bool completes_inline = E::completes_inline;
  E m_e;
  [[no_unique_address]] F m_f;
  upon_error_effect(E e, F f) : m_e(std::move(e)), m_f(std::move(f)) {}
  template <class R>
  auto connect(R r) && {
    return std::move(m_e).connect(detail::upon_error_receiver<F, R>{std::move(m_f), std::move(r)});
  }
};

/// Recovers from e's failure with f. Threading: f runs where e completes.
template <an_effect E, class F>
auto upon_error(E&& e, F&& f) {
  return upon_error_effect<std::remove_cvref_t<E>, std::decay_t<F>>(std::forward<E>(e), std::forward<F>(f));
}
/// `upon_error(f)` for pipes.
template <class F>
  requires(!an_effect<F>)
auto upon_error(F&& f) {
  return make_closure(
      [f = std::forward<F>(f)]<class E>(E&& e) mutable { return upon_error(std::forward<E>(e), std::move(f)); });
}

}  // namespace saturn::effect
