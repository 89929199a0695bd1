#pragma once
// The instrumented half of saturn/detail/atomic.hpp, for model tests only: compiled in when
// SATURN_INSTRUMENTED_ATOMICS is defined and this folder is on the include path. Every
// operation is first a scheduling point of the model checker (checker.hpp), then done on a
// std::atomic. Only one model thread runs at a time, so executions are sequentially
// consistent whatever order the caller names (see checker.hpp, "What it does not model").

#include <atomic>
#include <chrono>
#include <cstdint>

#include "checker.hpp"

namespace saturn::detail {

/// saturn::detail::atomic with a scheduling point before each operation.
template <class T>
class atomic {
 public:
  static constexpr bool is_always_lock_free = std::atomic<T>::is_always_lock_free;

  constexpr atomic() noexcept : m_v{} {}
  constexpr atomic(T v) noexcept : m_v{v} {}  // NOLINT: implicit, as std::atomic
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;

  T load(std::memory_order o = std::memory_order_seq_cst) const noexcept {
    model::point("load");
    return m_v.load(o);
  }
  void store(T v, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("store");
    (void)o;  // every execution is sequentially consistent
    const T old = m_v.exchange(v);
    model::wrote(old != v);
  }
  operator T() const noexcept { return load(); }  // NOLINT: as std::atomic
  T operator=(T v) noexcept {
    store(v);
    return v;
  }
  T exchange(T v, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("exchange");
    const T old = m_v.exchange(v, o);
    model::wrote(old != v);
    return old;
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order s, std::memory_order f) noexcept {
    // A weak CAS fails only when the value differs: spurious failures are not modelled.
    model::point("cas");
    return wrote_if(expected, desired, m_v.compare_exchange_strong(expected, desired, s, f));
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("cas");
    return m_v.compare_exchange_strong(expected, desired, o);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order s, std::memory_order f) noexcept {
    model::point("cas");
    return wrote_if(expected, desired, m_v.compare_exchange_strong(expected, desired, s, f));
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("cas");
    return wrote_if(expected, desired, m_v.compare_exchange_strong(expected, desired, o));
  }
  template <class D>
  T fetch_add(D d, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("fetch_add");
    model::wrote(d != 0);
    return m_v.fetch_add(d, o);
  }
  template <class D>
  T fetch_sub(D d, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("fetch_sub");
    model::wrote(d != 0);
    return m_v.fetch_sub(d, o);
  }
  T fetch_or(T d, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("fetch_or");
    const T old = m_v.fetch_or(d, o);
    model::wrote((old | d) != old);
    return old;
  }
  T fetch_and(T d, std::memory_order o = std::memory_order_seq_cst) noexcept {
    model::point("fetch_and");
    const T old = m_v.fetch_and(d, o);
    model::wrote((old & d) != old);
    return old;
  }
  T operator++() noexcept { return fetch_add(1) + 1; }
  T operator--() noexcept { return fetch_sub(1) - 1; }

  /// A CAS that succeeded changed the value unless it stored what was there.
  static bool wrote_if(const T& expected, const T& desired, bool ok) noexcept {
    model::wrote(ok && !(expected == desired));
    return ok;
  }

  /// The value without a scheduling point: for the checker's own futex check, which runs
  /// holding the baton.
  T unscheduled_load() const noexcept { return m_v.load(std::memory_order_relaxed); }

 private:
  std::atomic<T> m_v;
};

/// saturn::detail::atomic_ref with a scheduling point before each operation.
template <class T>
class atomic_ref {
 public:
  explicit atomic_ref(T& obj) noexcept : m_ref(obj) {}
  T load(std::memory_order o = std::memory_order_seq_cst) const noexcept {
    model::point("load");
    return m_ref.load(o);
  }
  void store(T v, std::memory_order o = std::memory_order_seq_cst) const noexcept {
    model::point("store");
    (void)o;
    model::wrote(m_ref.exchange(v) != v);
  }
  T exchange(T v, std::memory_order o = std::memory_order_seq_cst) const noexcept {
    model::point("exchange");
    const T old = m_ref.exchange(v, o);
    model::wrote(old != v);
    return old;
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order o = std::memory_order_seq_cst) const noexcept {
    model::point("cas");
    const bool ok = m_ref.compare_exchange_strong(expected, desired, o);
    model::wrote(ok && !(expected == desired));
    return ok;
  }
  template <class D>
  T fetch_add(D d, std::memory_order o = std::memory_order_seq_cst) const noexcept {
    model::point("fetch_add");
    model::wrote(d != 0);
    return m_ref.fetch_add(d, o);
  }

 private:
  std::atomic_ref<T> m_ref;
};

/// A fence is a scheduling point (and nothing more: executions are sequentially consistent).
inline void thread_fence(std::memory_order) noexcept { model::point("fence"); }

/// A spin: the checker runs another thread (free of the preemption bound).
inline void cpu_relax() noexcept { model::yield(); }

/// Blocks the model thread while `*word == expected`, until a futex_wake on `word`.
inline void futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected) noexcept {
  model::futex_wait(word, [&] { return word->unscheduled_load() == expected; });
}

/// The timed wait is modelled as a timeout at once: a scheduling point, then false when
/// the value still equals `expected` (the caller treats it as an expired timeout).
inline bool futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected, std::chrono::nanoseconds) noexcept {
  model::point("futex_wait_for");
  return word->unscheduled_load() != expected;
}

/// Wakes up to `count` model threads blocked on `word` (oldest first).
inline int futex_wake(atomic<std::uint32_t>* word, int count) noexcept { return model::futex_wake(word, count); }

}  // namespace saturn::detail
