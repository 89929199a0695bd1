/// \file
/// `let_value`: continue with another effect chosen from the value (P2300 `let_value`, a
/// flat-map). The value is kept in the operation state while the second effect runs (f
/// gets it by lvalue reference), and the second operation state is built in place in
/// storage reserved inside the first: one state, sized for both, no allocation.
#pragma once

#include <saturn/effect/core.hpp>

#include <memory>
#include <new>
#include <optional>

namespace saturn::effect {
namespace detail {

/// Storage for a value of type V (or nothing for void) kept alive for let_value's f.
template <class V>
struct value_slot {
  std::optional<V> m_v;
  template <class... A>
  void store(A&&... a) {
    m_v.emplace(std::forward<A>(a)...);
  }
  template <class F>
  decltype(auto) call(F& f) {
    return f(*m_v);
  }
};
template <>
struct value_slot<void> {
  void store() noexcept {}
  template <class F>
  decltype(auto) call(F& f) {
    return f();
  }
};

template <class F, class V>
struct let_result {
  static constexpr bool ok = std::is_invocable_v<F&, V&>;
  using type = typename std::conditional_t<ok, std::invoke_result<F&, V&>, std::type_identity<void>>::type;
};
template <class F>
struct let_result<F, void> {
  static constexpr bool ok = std::is_invocable_v<F&>;
  using type = typename std::conditional_t<ok, std::invoke_result<F&>, std::type_identity<void>>::type;
};

template <class E, class F, class R>
class let_op {
  using V = value_of<E>;
  using E2 = std::remove_cvref_t<typename let_result<F, V>::type>;

  struct first_receiver {
    let_op* m_op;
    template <class... A>
    void set_value(A&&... a) noexcept {
      m_op->on_value(std::forward<A>(a)...);
    }
    void set_error(failure f) noexcept { m_op->m_r.set_error(std::move(f)); }
    env get_env() const noexcept { return m_op->m_r.get_env(); }
  };
  struct second_receiver {
    let_op* m_op;
    template <class... A>
    void set_value(A&&... a) noexcept {
      m_op->m_r.set_value(std::forward<A>(a)...);
    }
    void set_error(failure f) noexcept { m_op->m_r.set_error(std::move(f)); }
    env get_env() const noexcept { return m_op->m_r.get_env(); }
  };
  using first_op = connect_result_t<E, first_receiver>;
  using second_op = connect_result_t<E2, second_receiver>;

 public:
  let_op(E&& e, F f, R r) : m_f(std::move(f)), m_r(std::move(r)), m_first(std::move(e).connect(first_receiver{this})) {}
  let_op(const let_op&) = delete;
  let_op& operator=(const let_op&) = delete;
  ~let_op() {
    if (m_second_live)
      std::destroy_at(second());
  }

  void start() noexcept { m_first.start(); }

 private:
  template <class... A>
  void on_value(A&&... a) noexcept {
    try {
      m_value.store(std::forward<A>(a)...);
      // lifetime: built in place from the prvalue connect() returns (guaranteed elision);
      // destroyed with this state, never while it runs.
      ::new (static_cast<void*>(m_second_storage)) second_op(connect(m_value.call(m_f), second_receiver{this}));
      m_second_live = true;
    } catch (...) {
      m_r.set_error(failure(std::current_exception()));
      return;
    }
    second()->start();
  }
  second_op* second() noexcept { return std::launder(reinterpret_cast<second_op*>(m_second_storage)); }

  [[no_unique_address]] F m_f;
  R m_r;
  first_op m_first;
  value_slot<V> m_value;
  alignas(second_op) unsigned char m_second_storage[sizeof(second_op)];
  bool m_second_live = false;
};

}  // namespace detail

/// `e | let_value(f)`: when e produces v, runs the effect f(v) and completes with it.
template <class E, class F>
struct let_value_effect : effect_base<let_value_effect<E, F>> {
  static_assert(detail::let_result<F, value_of<E>>::ok,
                "let_value(f): f cannot be called with (an lvalue of) the value of the effect before it");
  using next_type = std::remove_cvref_t<typename detail::let_result<F, value_of<E>>::type>;
  static_assert(an_effect<next_type>, "let_value(f): f must return an effect (e.g. just(x), nop(), a pipeline)");
  using value_type = value_of<next_type>;
  static constexpr bool completes_inline = E::completes_inline && next_type::completes_inline;
  E m_e;
  [[no_unique_address]] F m_f;
  let_value_effect(E e, F f) : m_e(std::move(e)), m_f(std::move(f)) {}
  template <class R>
  detail::let_op<E, F, R> connect(R r) && {
    return detail::let_op<E, F, R>(std::move(m_e), std::move(m_f), std::move(r));
  }
};

/// Continues `e` with the effect `f(value)`. Threading: f runs where e completes.
template <an_effect E, class F>
auto let_value(E&& e, F&& f) {
  return let_value_effect<std::remove_cvref_t<E>, std::decay_t<F>>(std::forward<E>(e), std::forward<F>(f));
}
/// `let_value(f)` for pipes.
template <class F>
  requires(!an_effect<F>)
auto let_value(F&& f) {
  return make_closure(
      [f = std::forward<F>(f)]<class E>(E&& e) mutable { return let_value(std::forward<E>(e), std::move(f)); });
}

}  // namespace saturn::effect
