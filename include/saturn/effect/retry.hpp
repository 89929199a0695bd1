/// \file
/// `retry(policy)`: run an effect again when it fails, up to a number of attempts, with an
/// exponential backoff between them (a loop timer, cancellable like any leaf).
///
/// The effect is copied for every attempt (it must be copyable); its operation state is
/// rebuilt in place in storage inside retry's own state, so attempts allocate nothing.
/// Not retried: cancellation (operation_canceled — the caller asked to stop) and
/// exceptions (programming errors); they, and the last attempt's error, are delivered.
#pragma once

#include <saturn/effect/core.hpp>
#include <saturn/effect/leaf.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <new>

namespace saturn::effect {

/// How often and how patiently to retry. `max_attempts` counts the first try (1 = never
/// retry). The wait before attempt k+1 (k ≥ 1) is backoff × multiplier^(k-1), capped at
/// max_backoff; a zero backoff retries at once.
struct retry_policy {
  unsigned max_attempts = 3;
  std::chrono::nanoseconds backoff{0};
  double multiplier = 2.0;
  std::chrono::nanoseconds max_backoff = std::chrono::seconds(1);

  /// The wait after failed attempt `attempt` (1-based) before the next one.
  std::chrono::nanoseconds delay_after(unsigned attempt) const noexcept {
    double d = static_cast<double>(backoff.count());
    for (unsigned i = 1; i < attempt && d < static_cast<double>(max_backoff.count()); ++i)
      d *= multiplier;
    return std::min(std::chrono::nanoseconds(static_cast<std::int64_t>(d)), max_backoff);
  }
  /// Whether `f` is worth another attempt (not a cancellation, not an exception).
  static bool retryable(const failure& f) noexcept { return !f.is_exception() && !f.is_canceled(); }
};

namespace detail {

template <class E, class R>
class retry_op {
  struct attempt_receiver {
    retry_op* m_op;
    template <class... A>
    void set_value(A&&... a) noexcept {
      m_op->m_r.set_value(std::forward<A>(a)...);
    }
    void set_error(failure f) noexcept { m_op->on_error(std::move(f)); }
    env get_env() const noexcept { return m_op->m_r.get_env(); }
  };
  struct wait_receiver {
    retry_op* m_op;
    void set_value() noexcept { m_op->on_waited(); }
    void set_error(failure f) noexcept { m_op->finish_wait_error(std::move(f)); }
    env get_env() const noexcept { return m_op->m_r.get_env(); }
  };
  using attempt_op = connect_result_t<E, attempt_receiver>;
  using wait_op = connect_result_t<timer_effect<void, false>, wait_receiver>;

 public:
  retry_op(E e, retry_policy p, R r) : m_e(std::move(e)), m_policy(p), m_r(std::move(r)) {}
  retry_op(const retry_op&) = delete;
  retry_op& operator=(const retry_op&) = delete;
  ~retry_op() { clear(); }

  void start() noexcept { begin_attempt(); }

 private:
  enum class live : unsigned char { none, attempt, wait };

  void clear() noexcept {
    if (m_live == live::attempt)
      std::destroy_at(std::launder(reinterpret_cast<attempt_op*>(m_storage)));
    else if (m_live == live::wait)
      std::destroy_at(std::launder(reinterpret_cast<wait_op*>(m_storage)));
    m_live = live::none;
  }

  void begin_attempt() noexcept {
    ++m_attempt;
    // lifetime: the previous attempt's state called us as its last action, so it may go.
    clear();
    try {
      ::new (static_cast<void*>(m_storage)) attempt_op(connect(E(m_e), attempt_receiver{this}));
    } catch (...) {
      m_r.set_error(failure(std::current_exception()));
      return;
    }
    m_live = live::attempt;
    std::launder(reinterpret_cast<attempt_op*>(m_storage))->start();
  }

  void on_error(failure f) noexcept {
    if (m_attempt >= m_policy.max_attempts || !retry_policy::retryable(f) || m_r.get_env().stop_requested()) {
      m_r.set_error(std::move(f));
      return;
    }
    const std::chrono::nanoseconds d = m_policy.delay_after(m_attempt);
    if (d.count() <= 0) {
      begin_attempt();
      return;
    }
    clear();
    ::new (static_cast<void*>(m_storage)) wait_op(connect(timer_effect<void, false>(d), wait_receiver{this}));
    m_live = live::wait;
    std::launder(reinterpret_cast<wait_op*>(m_storage))->start();
  }
  void on_waited() noexcept { begin_attempt(); }
  void finish_wait_error(failure f) noexcept { m_r.set_error(std::move(f)); }

  static constexpr std::size_t k_size = std::max(sizeof(attempt_op), sizeof(wait_op));
  static constexpr std::size_t k_align = std::max(alignof(attempt_op), alignof(wait_op));

  E m_e;
  retry_policy m_policy;
  R m_r;
  unsigned m_attempt = 0;
  live m_live = live::none;
  alignas(k_align) unsigned char m_storage[k_size];
};

}  // namespace detail

/// `e | retry(policy)`: e, run again on failure as the policy says.
template <class E>
struct retry_effect : effect_base<retry_effect<E>> {
  static_assert(std::is_copy_constructible_v<E>,
                "retry(policy): the effect must be copyable (it is started afresh for each attempt)");
  using value_type = value_of<E>;
  static constexpr bool completes_inline = false;
  E m_e;
  retry_policy m_policy;
  retry_effect(E e, retry_policy p) : m_e(std::move(e)), m_policy(p) {}
  template <class R>
  detail::retry_op<E, R> connect(R r) && {
    return detail::retry_op<E, R>(std::move(m_e), m_policy, std::move(r));
  }
};

/// Runs `e` up to policy.max_attempts times while it fails with a retryable error.
template <an_effect E>
auto retry(E&& e, retry_policy p) {
  return retry_effect<std::remove_cvref_t<E>>(std::forward<E>(e), p);
}
/// `retry(policy)` for pipes.
inline auto retry(retry_policy p) {
  return make_closure([p]<class E>(E&& e) { return retry(std::forward<E>(e), p); });
}

}  // namespace saturn::effect
