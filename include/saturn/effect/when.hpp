/// \file
/// `when_all`, `when_any` and `with_timeout`: run effects concurrently under one stop
/// source chained to the environment's token (P2300 `when_all`; `when_any` as in stdexec).
///
/// The children's operation states are members of the combinator's state (built in place,
/// no allocation per child). The stop source is a std::stop_source — the token type tier
/// B uses, so a task started as a child sees the same cancellation — which allocates its
/// shared state once per start.
///
/// Protocol: a counter of children still running. A child that ends first (when_any) or
/// fails (when_all) stops the others through the source *before* it decrements the
/// counter, so the state cannot be delivered (and destroyed) while request_stop() runs.
/// The last child to end delivers. So a combinator completes only after every child has
/// really ended — a cancelled ring operation after its final CQE.
#pragma once

#include <saturn/effect/core.hpp>
#include <saturn/effect/leaf.hpp>

#include <saturn/detail/atomic.hpp>
#include <cstddef>
#include <optional>
#include <stop_token>
#include <tuple>
#include <utility>
#include <variant>

namespace saturn::effect {
namespace detail {

/// void → std::monostate, so when_all can return a tuple.
template <class V>
using value_or_monostate = std::conditional_t<std::is_void_v<V>, std::monostate, V>;

/// The shared part of when_all / when_any: stop source, chain to the parent, counter.
template <class R>
class fan_state {
 public:
  fan_state(R r, std::size_t n) : m_r(std::move(r)), m_left(n) {}

 protected:
  /// Environment for the children: the parent's loop and scheduler, our token.
  env child_env() const noexcept {
    env e = m_r.get_env();
    e.token = &m_token;
    return e;
  }
  /// Before starting the children: chain a parent stop to ours.
  void chain_parent() {
    const env e = m_r.get_env();
    if (e.stoppable())
      m_chain.emplace(*e.token, forward{&m_source});
  }
  /// start(): chain a parent stop to ours (it may allocate: a failure ends the whole
  /// state with the exception, no child started), then start every child.
  template <class Slots>
  void start_children(Slots& slots) noexcept {
    try {
      chain_parent();
    } catch (...) {
      m_r.set_error(failure(std::current_exception()));
      return;
    }
    slots.start_all();
  }
  /// True for the child whose end completes the whole state (the last one).
  bool finish_one() noexcept {
    // ordering: acq_rel: the last child sees every other child's stored result.
    return m_left.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  void unchain() noexcept { m_chain.reset(); }

  struct forward {
    std::stop_source* m_target;
    void operator()() const noexcept { m_target->request_stop(); }
  };

  R m_r;
  std::stop_source m_source;
  std::stop_token m_token = m_source.get_token();
  saturn::detail::atomic<std::size_t> m_left;
  std::optional<std::stop_callback<forward>> m_chain;
};

/// One child's operation state, built in place from connect()'s prvalue.
template <std::size_t I, class Op>
struct child_slot {
  Op m_op;
  template <class E, class Rc>
  // Consumes `e`, as connect() does. NOLINTNEXTLINE(bugprone-move-forwarding-reference)
  child_slot(E&& e, Rc rc) : m_op(std::move(e).connect(std::move(rc))) {}
};

template <class Seq, class... Ops>
struct child_slots;
template <std::size_t... I, class... Ops>
struct child_slots<std::index_sequence<I...>, Ops...> : child_slot<I, Ops>... {
  template <class... Es, class... Rs>
  child_slots(std::tuple<Es...>&& es, Rs... rs) : child_slot<I, Ops>(std::move(std::get<I>(es)), rs)... {}
  void start_all() noexcept { (static_cast<child_slot<I, Ops>*>(this)->m_op.start(), ...); }
};

// ---------------------------------------------------------------- when_all

template <class R, class... Es>
class when_all_op : fan_state<R> {
  using base = fan_state<R>;
  using values = std::tuple<std::optional<value_or_monostate<value_of<Es>>>...>;

  template <std::size_t I>
  struct child_receiver {
    when_all_op* m_op;
    template <class... A>
    void set_value(A&&... a) noexcept {
      if constexpr (sizeof...(A) == 0)
        std::get<I>(m_op->m_values).emplace();
      else
        std::get<I>(m_op->m_values).emplace(std::forward<A>(a)...);
      m_op->child_done();
    }
    void set_error(failure f) noexcept { m_op->child_failed(std::move(f)); }
    env get_env() const noexcept { return m_op->child_env(); }
  };
  template <class Seq>
  struct slots_for;
  template <std::size_t... I>
  struct slots_for<std::index_sequence<I...>> {
    using type = child_slots<std::index_sequence<I...>, connect_result_t<Es, child_receiver<I>>...>;
  };
  using seq = std::index_sequence_for<Es...>;
  using slots = typename slots_for<seq>::type;

 public:
  when_all_op(std::tuple<Es...>&& es, R r) : when_all_op(std::move(es), std::move(r), seq{}) {}
  when_all_op(const when_all_op&) = delete;
  when_all_op& operator=(const when_all_op&) = delete;

  void start() noexcept { this->start_children(m_slots); }

 private:
  template <std::size_t... I>
  when_all_op(std::tuple<Es...>&& es, R r, std::index_sequence<I...>)
      : base(std::move(r), sizeof...(Es)), m_slots(std::move(es), child_receiver<I>{this}...) {}

  void child_failed(failure f) noexcept {
    if (!m_failed.exchange(true, std::memory_order_acq_rel)) {
      m_failure.emplace(std::move(f));
      this->m_source.request_stop();  // before our decrement: see the file comment
    }
    child_done();
  }
  void child_done() noexcept {
    if (!this->finish_one())
      return;
    this->unchain();
    if (m_failure) {
      this->m_r.set_error(std::move(*m_failure));
      return;
    }
    this->m_r.set_value(std::apply([](auto&... v) { return std::tuple(std::move(*v)...); }, m_values));
  }

  slots m_slots;
  values m_values;
  std::optional<failure> m_failure;
  saturn::detail::atomic<bool> m_failed{false};
};

// ---------------------------------------------------------------- when_any

template <class R, class V, class... Es>
class when_any_op : fan_state<R> {
  using base = fan_state<R>;

  struct child_receiver {
    when_any_op* m_op;
    template <class... A>
    void set_value(A&&... a) noexcept {
      if (m_op->claim())
        m_op->m_winner.emplace(std::forward<A>(a)...);
      m_op->child_done();
    }
    void set_error(failure f) noexcept {
      if (m_op->claim())
        m_op->m_winner.emplace(std::move(f));
      m_op->child_done();
    }
    env get_env() const noexcept { return m_op->child_env(); }
  };
  template <class Seq>
  struct slots_for;
  template <std::size_t... I>
  struct slots_for<std::index_sequence<I...>> {
    using type = child_slots<std::index_sequence<I...>, connect_result_t<Es, child_receiver>...>;
  };
  using seq = std::index_sequence_for<Es...>;
  using slots = typename slots_for<seq>::type;
  using stored = std::conditional_t<std::is_void_v<V>, outcome<void>, outcome<V>>;

 public:
  when_any_op(std::tuple<Es...>&& es, R r) : when_any_op(std::move(es), std::move(r), seq{}) {}
  when_any_op(const when_any_op&) = delete;
  when_any_op& operator=(const when_any_op&) = delete;

  void start() noexcept { this->start_children(m_slots); }

 private:
  template <std::size_t... I>
  when_any_op(std::tuple<Es...>&& es, R r, std::index_sequence<I...>)
      : base(std::move(r), sizeof...(Es)), m_slots(std::move(es), (static_cast<void>(I), child_receiver{this})...) {}

  /// True for the first child to end (the winner); it stops the others.
  bool claim() noexcept {
    if (m_claimed.exchange(true, std::memory_order_acq_rel))
      return false;
    return true;
  }
  void child_done() noexcept {
    if (!m_stopped.exchange(true, std::memory_order_acq_rel))
      this->m_source.request_stop();  // before our decrement: see the file comment
    if (!this->finish_one())
      return;
    this->unchain();
    if (!m_winner->has_value()) {
      this->m_r.set_error(m_winner->error());
      return;
    }
    if constexpr (std::is_void_v<V>)
      this->m_r.set_value();
    else
      this->m_r.set_value(std::move(**m_winner));
  }

  slots m_slots;
  std::optional<stored> m_winner;
  saturn::detail::atomic<bool> m_claimed{false};
  saturn::detail::atomic<bool> m_stopped{false};
};

template <class... Es>
inline constexpr bool same_values = true;
template <class E0, class... Es>
inline constexpr bool same_values<E0, Es...> = (std::is_same_v<value_of<E0>, value_of<Es>> && ...);

}  // namespace detail

/// Runs every child concurrently; completes with a tuple of their values (void →
/// std::monostate), or with the first failure — after stopping the others and waiting
/// for every one of them to end.
template <class... Es>
struct when_all_effect : effect_base<when_all_effect<Es...>> {
  using value_type = std::tuple<detail::value_or_monostate<value_of<Es>>...>;
  static constexpr bool completes_inline = (Es::completes_inline && ...);
  std::tuple<Es...> m_children;
  explicit when_all_effect(Es... es) : m_children(std::move(es)...) {}
  template <class R>
  detail::when_all_op<R, Es...> connect(R r) && {
    return detail::when_all_op<R, Es...>(std::move(m_children), std::move(r));
  }
};

/// Runs every child concurrently; the first to end (with a value or a failure) wins, the
/// others are stopped (their ring operations get ASYNC_CANCEL) and awaited until they
/// have really ended; what they end with is discarded. Every child must have the same
/// value type.
template <class... Es>
struct when_any_effect : effect_base<when_any_effect<Es...>> {
  static_assert(sizeof...(Es) > 0, "when_any() needs at least one effect");
  static_assert(detail::same_values<Es...>, "when_any(e...): every effect must have the same value type");
  using value_type = value_of<std::tuple_element_t<0, std::tuple<Es...>>>;
  static constexpr bool completes_inline = (Es::completes_inline && ...);
  std::tuple<Es...> m_children;
  explicit when_any_effect(Es... es) : m_children(std::move(es)...) {}
  template <class R>
  detail::when_any_op<R, value_type, Es...> connect(R r) && {
    return detail::when_any_op<R, value_type, Es...>(std::move(m_children), std::move(r));
  }
};

/// `when_all(a, b, …)`. Threading: children start in order on the starting thread.
template <an_effect... Es>
auto when_all(Es&&... es) {
  return when_all_effect<std::remove_cvref_t<Es>...>(std::forward<Es>(es)...);
}
/// `when_any(a, b, …)`.
template <an_effect... Es>
auto when_any(Es&&... es) {
  return when_any_effect<std::remove_cvref_t<Es>...>(std::forward<Es>(es)...);
}

/// `e | with_timeout(d)`: e, unless it has not ended after `d` (a loop timer): then e is
/// stopped, awaited until it has ended, and the result is std::errc::timed_out
/// ("with_timeout"). A stop of the environment's token reaches e as well.
template <an_effect E>
auto with_timeout(E&& e, std::chrono::nanoseconds d) {
  using V = value_of<E>;
  return when_any(std::forward<E>(e), detail::timer_effect<V, true>(d));
}
/// `with_timeout(d)` for pipes.
inline auto with_timeout(std::chrono::nanoseconds d) {
  return make_closure([d]<class E>(E&& e) { return with_timeout(std::forward<E>(e), d); });
}

}  // namespace saturn::effect
