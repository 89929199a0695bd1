/// \file
/// `metrics::gauge`: a value that goes up and down (Prometheus type gauge).
///
///     saturn::metrics::gauge& depth = saturn::metrics::registry::global().gauge(
///         "myapp_queue_depth", "Jobs waiting");
///     depth.set(12);
///     depth.add(-1);
#pragma once

#include <saturn/detail/atomic.hpp>

namespace saturn::metrics {

class registry;

/// A gauge made by registry::gauge; lives as long as its registry.
///
/// Threading: any thread. A gauge is one shared value (a last write must win, which
/// per-thread cells cannot give): set() is a relaxed store, add() a relaxed atomic add (a
/// read-modify-write on a shared line), so for a value changed on every operation of a
/// hot path prefer two counters (opened / closed) and let the query subtract. Never
/// suspends.
class gauge {
 public:
  /// Replaces the value. Any thread.
  void set(double v) noexcept { m_v.store(v, std::memory_order_relaxed); }
  /// Adds `d` (may be negative). Any thread; an atomic read-modify-write.
  void add(double d) noexcept { m_v.fetch_add(d, std::memory_order_relaxed); }
  void inc() noexcept { add(1); }  ///< add(1)
  void dec() noexcept { add(-1); } ///< add(-1)
  /// The value now. Any thread.
  double value() const noexcept { return m_v.load(std::memory_order_relaxed); }

 private:
  friend class registry;
  gauge() noexcept = default;
  // ordering: relaxed throughout; a gauge orders nothing else.
  saturn::detail::atomic<double> m_v{0.0};
};

}  // namespace saturn::metrics
