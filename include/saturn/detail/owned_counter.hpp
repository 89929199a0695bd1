#pragma once
/// \file
/// `owned_counter`: a statistic written by one thread and read by any. The owner adds with
/// a relaxed load and a relaxed store (on x86-64 a `mov`, an `add`, a `mov`: what a plain
/// `++` compiles to, no lock prefix, no read-modify-write), so the hot path pays nothing
/// for the counter being readable from a metrics collector on another thread.
///
/// `owned_counter` is a metric: with SATURN_METRICS=OFF (saturn/config.hpp) its writes
/// compile to nothing and it reads 0. `progress_counter` always counts: it carries a
/// state someone acts on (the stall detector's progress word), not a statistic.

#include <saturn/config.hpp>
#include <saturn/detail/atomic.hpp>

#include <cstdint>

namespace saturn::detail {

/// A 64-bit counter with one writer; `Counts` false makes every write a no-op. Threading:
/// ++, --, += only on the owning thread; value() and the conversion from any thread (a
/// torn read is impossible, the value may lag by the owner's in-flight adds). Copying
/// reads the value.
template <bool Counts>
class basic_owned_counter {
 public:
  basic_owned_counter() noexcept = default;
  basic_owned_counter(std::uint64_t v) noexcept : m_v(v) {}  // NOLINT(google-explicit-constructor)
  basic_owned_counter(const basic_owned_counter& o) noexcept : m_v(o.value()) {}
  basic_owned_counter& operator=(const basic_owned_counter& o) noexcept {
    m_v.store(o.value(), std::memory_order_relaxed);
    return *this;
  }
  // ordering: relaxed; only this counter's value is published, nothing is ordered by it.
  std::uint64_t value() const noexcept { return m_v.load(std::memory_order_relaxed); }
  operator std::uint64_t() const noexcept { return value(); }  // NOLINT(google-explicit-constructor)
  basic_owned_counter& operator+=(std::uint64_t n) noexcept {
    if constexpr (Counts)
      m_v.store(m_v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    return *this;
  }
  basic_owned_counter& operator++() noexcept { return *this += 1; }
  basic_owned_counter& operator--() noexcept { return *this += ~std::uint64_t{0}; }  // -1 modulo 2^64

 private:
  atomic<std::uint64_t> m_v{0};
};

/// A statistic: counts only when saturn is built with SATURN_METRICS (the default).
using owned_counter = basic_owned_counter<config::metrics>;
/// A one-writer count that is always kept (state another thread acts on).
using progress_counter = basic_owned_counter<true>;

}  // namespace saturn::detail
