#pragma once
/// \file
/// `owned_counter`: a statistic written by one thread and read by any. The owner adds with
/// a relaxed load and a relaxed store (on x86-64 a `mov`, an `add`, a `mov`: what a plain
/// `++` compiles to, no lock prefix, no read-modify-write), so the hot path pays nothing
/// for the counter being readable from a metrics collector on another thread.

#include <saturn/detail/atomic.hpp>

#include <cstdint>

namespace saturn::detail {

/// A 64-bit counter with one writer. Threading: ++, --, += only on the owning thread;
/// value() and the conversion from any thread (a torn read is impossible, the value may
/// lag by the owner's in-flight adds). Copying reads the value.
class owned_counter {
 public:
  owned_counter() noexcept = default;
  owned_counter(std::uint64_t v) noexcept : m_v(v) {}  // NOLINT(google-explicit-constructor)
  owned_counter(const owned_counter& o) noexcept : m_v(o.value()) {}
  owned_counter& operator=(const owned_counter& o) noexcept {
    m_v.store(o.value(), std::memory_order_relaxed);
    return *this;
  }
  // ordering: relaxed; only this counter's value is published, nothing is ordered by it.
  std::uint64_t value() const noexcept { return m_v.load(std::memory_order_relaxed); }
  operator std::uint64_t() const noexcept { return value(); }  // NOLINT(google-explicit-constructor)
  owned_counter& operator+=(std::uint64_t n) noexcept {
    m_v.store(m_v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    return *this;
  }
  owned_counter& operator++() noexcept { return *this += 1; }
  owned_counter& operator--() noexcept {
    m_v.store(m_v.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return *this;
  }

 private:
  atomic<std::uint64_t> m_v{0};
};

}  // namespace saturn::detail
